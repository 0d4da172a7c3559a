package aggregator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

// Events of the rewrite guard, recorded on DeletionGuard.Lease.
const (
	// ReasonRewritesHeld (Warning): a pass would have rewritten too much of the tree at once (tiers renumbered,
	// HyperNodes moved, many nodes relabelled); nothing was written.
	ReasonRewritesHeld = "RewritesHeld"
	// ReasonRewritesConfirmed (Normal): held rewrites go ahead, confirmed by an admin or by their persistence.
	ReasonRewritesConfirmed = "RewritesConfirmed"
)

// rewriteHold is the rewrite guard's kind.
var rewriteHold = holdKind{what: "topology rewrites", held: ReasonRewritesHeld, confirmed: ReasonRewritesConfirmed,
	gauge:         func(m *Metrics) prometheus.Gauge { return m.rewritesHeld },
	passes:        func(m *Metrics) prometheus.Counter { return m.rewriteHeldPasses },
	confirmations: func(m *Metrics) *prometheus.CounterVec { return m.rewritesConfirmed }}

// rewrites is what one pass would change of the tree schedulers already read: owned HyperNodes that stay but
// move (another tier, another parent), and nodes whose topology labels change value.
type rewrites struct {
	// hyperNodes are the moved HyperNodes, of managed owned ones.
	hyperNodes []string
	managed    int
	// nodes are the relabelled nodes, of labelled ones carrying a topology label.
	nodes    []string
	labelled int
}

// findRewrites compares the desired HyperNodes with the existing owned ones, and the desired topology labels
// (labels, nil when fabricmap writes none) with the nodes' labels under keys. A HyperNode created or deleted,
// a label added to a node that had none or taken from one the tree no longer places is no rewrite: the deletion
// guard and the label hold judge those.
func findRewrites(desired, existing []topologyv1alpha1.HyperNode, nodes map[string]*metav1.PartialObjectMetadata,
	labels map[string]map[string]string, keys []string) rewrites {
	rw := rewrites{managed: len(existing)}
	want := map[string]*topologyv1alpha1.HyperNode{}
	for i := range desired {
		want[desired[i].Name] = &desired[i]
	}
	wantParent, haveParent := parents(desired), parents(existing)
	for i := range existing {
		cur := &existing[i]
		d, ok := want[cur.Name]
		if !ok {
			continue
		}
		if d.Spec.Tier != cur.Spec.Tier || wantParent[cur.Name] != haveParent[cur.Name] {
			rw.hyperNodes = append(rw.hyperNodes, cur.Name)
		}
	}
	for n, node := range nodes {
		have := node.Labels
		if !slices.ContainsFunc(keys, func(k string) bool { return have[k] != "" }) {
			continue
		}
		rw.labelled++
		w, placed := labels[n]
		if !placed {
			continue
		}
		if slices.ContainsFunc(keys, func(k string) bool { return have[k] != "" && w[k] != "" && have[k] != w[k] }) {
			rw.nodes = append(rw.nodes, n)
		}
	}
	slices.Sort(rw.hyperNodes)
	slices.Sort(rw.nodes)
	return rw
}

// parents maps each HyperNode listed by name as a member of another to that other.
func parents(hns []topologyv1alpha1.HyperNode) map[string]string {
	out := map[string]string{}
	for _, hn := range hns {
		for _, m := range hn.Spec.Members {
			if m.Type == topologyv1alpha1.MemberTypeHyperNode && m.Selector.ExactMatch != nil {
				out[m.Selector.ExactMatch.Name] = hn.Name
			}
		}
	}
	return out
}

// guardRewrites holds the whole pass when it would rewrite too much of the tree at once: more moved HyperNodes,
// or more relabelled nodes, than the deletion guard's limits allow (DeletionGuard.tooMany on each count). A tree whose
// tiers are renumbered (every report gone but a source's spines, an NVLink tier appearing) or whose nodes
// move en masse is far more often a fault than a recabling; schedulers keep reading the last tree until the same
// rewrites persist for DeletionGuard.ConfirmAfter or an admin confirms (ConfirmDeletionsAnnotation). It
// returns whether the pass may write, and when to look again while it may not.
func (r *Reconciler) guardRewrites(ctx context.Context, rw rewrites) (bool, time.Duration) {
	g := r.Config.DeletionGuard
	if g == nil {
		return true, 0
	}
	set := make([]string, 0, len(rw.hyperNodes)+len(rw.nodes))
	for _, n := range rw.hyperNodes {
		set = append(set, "HyperNode/"+n)
	}
	for _, n := range rw.nodes {
		set = append(set, "Node/"+n)
	}
	tripped := g.tooMany(len(rw.hyperNodes), rw.managed) || g.tooMany(len(rw.nodes), rw.labelled)
	why := fmt.Sprintf("%d of %d managed HyperNodes would change tier or parent and %d of %d labelled nodes their topology labels, above the limit of %.0f%%",
		len(rw.hyperNodes), rw.managed, len(rw.nodes), rw.labelled, 100*g.MaxShare)
	ok, wait, _ := r.guardPass(ctx, &r.rewriteGuard, rewriteHold, set, len(set), tripped, why)
	return ok, wait
}

// tooMany reports whether n changes of total are beyond the guard's limits: more than MinCount, and more than
// MaxShare of total.
func (g DeletionGuard) tooMany(n, total int) bool {
	return n > g.MinCount && float64(n) > g.MaxShare*float64(total)
}
