package aggregator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/treeread"
)

// ReasonTreeInconsistent (Warning) is recorded on the leader Lease when a pass writes nothing because the
// HyperNodes it would leave are inconsistent.
const ReasonTreeInconsistent = "TreeInconsistent"

// errInconsistent is what sync returns when it wrote nothing because the HyperNodes it would leave are
// inconsistent; the pass then writes no labels or outputs either, and it is no error to retry with backoff.
var errInconsistent = errors.New("the HyperNodes a pass would leave are inconsistent")

// inconsistentRetry is how soon a pass that refused an inconsistent result looks again (an event usually comes
// first: the report or source that caused it changes).
const inconsistentRetry = time.Minute

// checkConsistent reads the owned HyperNodes as they would be after the pass's writes (existing, with the
// plan's kept and desired ones applied and the due ones deleted) the way a scheduler reads them (treeread, the
// placer's reader), and refuses the pass unless that is a tree: every member HyperNode exists and has one
// parent, no node is in two HyperNodes, every parent's tier is above its children's. Schedulers trust the
// objects blindly, so a pass that would leave them inconsistent writes nothing: the last tree stays, and the
// log, a metric and an Event (once per inconsistency) say why. Node members selected by regex or label are
// resolved against the nodes' names and the labels the pass writes (labels) over the ones they carry.
func (gs *guardStage) checkConsistent(ctx context.Context, existing []topologyv1alpha1.HyperNode, plan pendingPlan, due []string,
	nodes map[string]*metav1.PartialObjectMetadata, labels map[string]map[string]string) error {
	after := afterPass(existing, plan, due)
	var nodeLabels map[string]map[string]string // only selectors by regex or label need them: building costs a map per node
	if treeread.NeedsNodeLabels(after) {
		nodeLabels = nodeLabelsAfter(nodes, labels)
	}
	err := consistent(after, nodeLabels)
	if err == nil {
		if gs.inconsistent != "" {
			gs.r.Log.Info("the tree is consistent again; writing it")
			gs.inconsistent = ""
		}
		return nil
	}
	gs.r.Metrics.inconsistentPasses.Inc()
	if msg := err.Error(); msg != gs.inconsistent {
		gs.inconsistent = msg
		gs.r.Log.Error("nothing written: the HyperNodes this pass would leave are inconsistent; the last tree stays as written", "err", err)
		gs.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonTreeInconsistent,
			"nothing written: the HyperNodes the inferred tree would leave are inconsistent (%v); the last tree stays as written", err)
	}
	return fmt.Errorf("%w: %w", errInconsistent, err)
}

// afterPass returns the owned HyperNodes as they are once plan is applied and due deleted, by name.
func afterPass(existing []topologyv1alpha1.HyperNode, plan pendingPlan, due []string) []topologyv1alpha1.HyperNode {
	by := make(map[string]topologyv1alpha1.HyperNode, len(existing)+len(plan.desired))
	for _, hn := range existing {
		by[hn.Name] = hn
	}
	for _, hn := range plan.kept {
		by[hn.Name] = hn
	}
	for _, hn := range plan.desired {
		by[hn.Name] = hn
	}
	for _, n := range due {
		delete(by, n)
	}
	out := make([]topologyv1alpha1.HyperNode, 0, len(by))
	for _, n := range slices.Sorted(maps.Keys(by)) {
		out = append(out, by[n])
	}
	return out
}

// nodeLabelsAfter is every node's labels once the pass wrote labels (node → its topology labels) over them.
func nodeLabelsAfter(nodes map[string]*metav1.PartialObjectMetadata, labels map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(nodes))
	for n, node := range nodes {
		want, ok := labels[n]
		if !ok {
			out[n] = node.Labels
			continue
		}
		merged := maps.Clone(node.Labels)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, want)
		out[n] = merged
	}
	return out
}

// consistent checks HyperNodes as a tree: treeread's strict reading (one parent per HyperNode, known members,
// readable selectors), then one domain per node and each parent's tier above its children's.
func consistent(hns []topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string) error {
	t, err := treeread.TreeFromHyperNodes(hns, nodeLabels)
	if err != nil {
		return err
	}
	in := map[string]string{}
	var errs []error
	for _, name := range t.Names() {
		d := t.Domains[name]
		if p, ok := t.Domains[d.Parent]; ok && p.Tier <= d.Tier {
			errs = append(errs, fmt.Errorf("HyperNode %q (tier %d) is a member of %q, whose tier %d is not higher", name, d.Tier, p.Name, p.Tier))
		}
		for _, n := range d.Nodes {
			if other, dup := in[n]; dup {
				errs = append(errs, fmt.Errorf("node %q is a member of both %q and %q", n, other, name))
			}
			in[n] = name
		}
	}
	return errors.Join(errs...)
}
