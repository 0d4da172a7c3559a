package aggregator

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

// planHyperNodes plans the writes that make the owned HyperNodes match desired when they are served (nil
// when they are not: nothing to write).
func (gs *guardStage) planHyperNodes(ctx context.Context, desired, existing []topologyv1alpha1.HyperNode, served bool, placed map[string]bool,
	nodes map[string]*metav1.PartialObjectMetadata, labels map[string]map[string]string) (*hyperNodeWrites, time.Duration, error) {
	if !served {
		return nil, 0, nil
	}
	return gs.planWrites(ctx, desired, existing, placed, nodes, labels)
}

// planWrites decides what a pass writes of the HyperNodes: the desired ones that differ from the existing owned
// ones, and the owned ones absent from the tree for the grace period, unless the deletion guard holds them.
// While they wait, absent HyperNodes stay below the tree (anchorPending): their parent lists them again, and
// they keep only the members the tree has not placed elsewhere (placed are the nodes the tree places, nodes
// every Node); one that no HyperNode of the tree stands above any more is due at once, through the guard,
// rather than left as a second root. It returns when to look again for pending deletes, and errInconsistent
// (wrapped) when the HyperNodes it would leave are inconsistent: then nothing of the pass is written.
func (gs *guardStage) planWrites(ctx context.Context, desired, existing []topologyv1alpha1.HyperNode, placed map[string]bool,
	nodes map[string]*metav1.PartialObjectMetadata, labels map[string]map[string]string) (*hyperNodeWrites, time.Duration, error) {
	have := map[string]*topologyv1alpha1.HyperNode{}
	for i := range existing {
		have[existing[i].Name] = &existing[i]
	}
	want := map[string]bool{}
	for i := range desired {
		want[desired[i].Name] = true
		delete(gs.absentSince, desired[i].Name)
	}

	var requeue time.Duration
	now := gs.r.now()
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	sort.Strings(names)
	var gone []string
	pastGrace := map[string]bool{}
	for _, n := range names {
		if want[n] {
			continue
		}
		gone = append(gone, n)
		since, ok := gs.absentSince[n]
		if !ok {
			since = now
			gs.absentSince[n] = now
			gs.r.Log.Info("HyperNode no longer in the tree; it stays below its parent and is deleted after the grace period", "hypernode", n, "grace", gs.r.Config.DeleteGracePeriod)
		}
		if left := gs.r.Config.DeleteGracePeriod - now.Sub(since); left > 0 {
			if requeue == 0 || left < requeue {
				requeue = left
			}
			continue
		}
		pastGrace[n] = true
	}
	var nodeNames []string // what a pending HyperNode's regular expression may still select; none pending, none needed
	if len(gone) > 0 {
		nodeNames = slices.Sorted(maps.Keys(nodes))
	}
	plan := anchorPending(desired, existing, placed, nodeNames, pastGrace)
	due := slices.Sorted(maps.Keys(pastGrace))
	for _, n := range plan.unanchored {
		gs.r.Log.Info("HyperNode no longer in the tree, and no HyperNode of the tree is left above it: deleting it now rather than leave a second root",
			"hypernode", n, "absentFor", now.Sub(gs.absentSince[n]))
		due = append(due, n)
	}
	ok, wait, lifted := gs.guardDeletions(ctx, gone, len(due), len(have))
	if wait > 0 && (requeue == 0 || wait < requeue) {
		requeue = wait
	}
	if lifted && len(due) > 0 {
		// A hold ended because HyperNodes came back (agents restarting after every report vanished): the ones
		// still gone waited out their grace period under the hold, and their reports are likely a moment away.
		// Each gets a grace period from now rather than a deletion now and a new HyperNode (new UID) soon after.
		for _, n := range gone {
			gs.absentSince[n] = now
		}
		gs.r.Log.Info("the deletion hold lifted unconfirmed: the HyperNodes still gone get a new grace period", "gone", len(gone), "grace", gs.r.Config.DeleteGracePeriod)
		if requeue == 0 || gs.r.Config.DeleteGracePeriod < requeue {
			requeue = gs.r.Config.DeleteGracePeriod
		}
		ok = false
	}
	if !ok {
		due = nil
		plan = anchorPending(desired, existing, placed, nodeNames, nil) // nothing goes: every pending one waits below the tree
	}
	if err := gs.checkConsistent(ctx, existing, plan, due, nodes, labels); err != nil {
		if requeue == 0 || requeue > inconsistentRetry {
			requeue = inconsistentRetry
		}
		return nil, requeue, err
	}
	return &hyperNodeWrites{plan: plan, due: due, have: have}, requeue, nil
}
