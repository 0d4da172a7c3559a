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

// rewrites is what a pass would change of the tree schedulers read, counted against the rewrite guard's
// baseline: owned HyperNodes that stay but move (another tier, another parent), and nodes whose topology labels
// change value.
type rewrites struct {
	// hyperNodes are the moved HyperNodes, of managed owned ones.
	hyperNodes []string
	managed    int
	// nodes are the relabelled nodes, of labelled ones carrying a topology label.
	nodes    []string
	labelled int
}

// set names the rewrites as the guard holds them: "HyperNode/NAME" and "Node/NAME".
func (rw rewrites) set() []string {
	set := make([]string, 0, len(rw.hyperNodes)+len(rw.nodes))
	for _, n := range rw.hyperNodes {
		set = append(set, "HyperNode/"+n)
	}
	for _, n := range rw.nodes {
		set = append(set, "Node/"+n)
	}
	return set
}

// hyperNodePlace is where a HyperNode stands: its tier, and the HyperNode that lists it as a member ("" for none).
type hyperNodePlace struct {
	tier   int
	parent string
}

// treeView is a tree as the rewrite guard compares it: each HyperNode's place, and each node's topology labels
// (the set ones under the label keys; a node without any is not listed).
type treeView struct {
	hyperNodes map[string]hyperNodePlace
	nodes      map[string]map[string]string
}

// writtenView is the tree as written: the owned HyperNodes and the topology labels under keys of the nodes.
func writtenView(existing []topologyv1alpha1.HyperNode, nodes map[string]*metav1.PartialObjectMetadata, keys []string) treeView {
	v := treeView{hyperNodes: places(existing), nodes: map[string]map[string]string{}}
	for n, node := range nodes {
		if l := topologyLabels(node.Labels, keys); l != nil {
			v.nodes[n] = l
		}
	}
	return v
}

// desiredView is the tree a pass would write: its HyperNodes and the topology labels it gives each placed node
// (labels nil when fabricmap writes none).
func desiredView(desired []topologyv1alpha1.HyperNode, labels map[string]map[string]string, keys []string) treeView {
	v := treeView{hyperNodes: places(desired), nodes: make(map[string]map[string]string, len(labels))}
	for n, l := range labels {
		if l := topologyLabels(l, keys); l != nil {
			v.nodes[n] = l
		}
	}
	return v
}

// topologyLabels keeps of labels the set ones under keys; nil when none is set.
func topologyLabels(labels map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v := labels[k]; v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// places maps each HyperNode to its tier and parent.
func places(hns []topologyv1alpha1.HyperNode) map[string]hyperNodePlace {
	parent := parents(hns)
	out := make(map[string]hyperNodePlace, len(hns))
	for _, hn := range hns {
		out[hn.Name] = hyperNodePlace{tier: hn.Spec.Tier, parent: parent[hn.Name]}
	}
	return out
}

// findRewrites compares the tree a pass wants with the tree it is judged against (have). A HyperNode created
// or deleted, a label added to a node that had none or taken from one the tree no longer places is no rewrite:
// the deletion guard and the label hold judge those.
func findRewrites(want, have treeView) rewrites {
	rw := rewrites{managed: len(have.hyperNodes), labelled: len(have.nodes)}
	for n, cur := range have.hyperNodes {
		if d, ok := want.hyperNodes[n]; ok && d != cur {
			rw.hyperNodes = append(rw.hyperNodes, n)
		}
	}
	for n, cur := range have.nodes {
		w, placed := want.nodes[n]
		if placed && relabelled(cur, w) {
			rw.nodes = append(rw.nodes, n)
		}
	}
	slices.Sort(rw.hyperNodes)
	slices.Sort(rw.nodes)
	return rw
}

// relabelled reports whether a label set in both have and want changes value.
func relabelled(have, want map[string]string) bool {
	for k, v := range have {
		if w := want[k]; w != "" && w != v {
			return true
		}
	}
	return false
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

// guardRewrites holds the whole pass when it would rewrite too much of the tree: more moved HyperNodes, or more
// relabelled nodes, than the deletion guard's limits allow (DeletionGuard.tooMany on each count). The rewrites
// are counted against the rewrite guard's baseline (rewriteguardbaseline.go), the tree as it stood before the
// rewrites of the guard's window, not against the last pass: one change the watches deliver in several passes
// is judged whole. A tree whose tiers are renumbered (every report gone but a source's spines, an NVLink tier
// appearing) or whose nodes move en masse is far more often a fault than a recabling; schedulers keep reading
// the last tree until the same rewrites persist for DeletionGuard.ConfirmAfter or an admin confirms
// (ConfirmDeletionsAnnotation). desired and labels are what the pass would write, existing and nodes what is
// written. It returns whether the pass may write, and when to look again while it may not.
func (gs *guardStage) guardRewrites(ctx context.Context, desired, existing []topologyv1alpha1.HyperNode,
	nodes map[string]*metav1.PartialObjectMetadata, labels map[string]map[string]string) (bool, time.Duration) {
	g := gs.r.Config.DeletionGuard
	if g == nil {
		return true, 0
	}
	keys := gs.r.Config.LabelKeys.All()
	var wait time.Duration
	ok := gs.rewriteGuard.judge(desiredView(desired, labels, keys), writtenView(existing, nodes, keys), gs.r.now(), g.window(),
		func(rw rewrites) bool {
			set := rw.set()
			why := fmt.Sprintf("%d of %d managed HyperNodes would change tier or parent and %d of %d labelled nodes their topology labels "+
				"(counted against the tree before the rewrites of the last %v), above the limit of %.0f%%",
				len(rw.hyperNodes), rw.managed, len(rw.nodes), rw.labelled, g.window(), 100*g.MaxShare)
			var ok bool
			ok, wait, _ = gs.guardPass(ctx, &gs.rewriteGuard.guardState, rewriteHold, set, len(set), g.tripsRewrites(rw), why)
			return ok
		})
	return ok, wait
}

// tripsRewrites reports whether rw are too many rewrites at once: more moved HyperNodes, or more relabelled
// nodes, than the limits allow.
func (g DeletionGuard) tripsRewrites(rw rewrites) bool {
	return g.tooMany(len(rw.hyperNodes), rw.managed) || g.tooMany(len(rw.nodes), rw.labelled)
}

// tooMany reports whether n changes of total are beyond the guard's limits: more than MinCount, and more than
// MaxShare of total.
func (g DeletionGuard) tooMany(n, total int) bool {
	return n > g.MinCount && float64(n) > g.MaxShare*float64(total)
}
