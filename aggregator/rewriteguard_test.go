package aggregator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestRewritesHeldUntilConfirmed moves every node to the other leaf at once (two leaves swap their nodes): on the
// real API server nothing is written, neither HyperNodes nor labels, until an admin confirms; then the new tree
// is written. A confirmation dated in the future confirms nothing and says so in an Event.
func TestRewritesHeldUntilConfirmed(t *testing.T) {
	testenv.Require(t)
	nodes := []string{"rw-n0", "rw-n1", "rw-n2", "rw-n3", "rw-n4", "rw-n5"}
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, MinCount: 2})
	r.Config.NodeLabels = true
	key := r.Config.DeletionGuard.Lease
	for i, n := range nodes {
		createNode(t, n)
		upsertReport(t, report(n, fmt.Sprintf("%02x", 0xc0+i/3)))
	}
	reconcileOnce(t, r)
	before, labelsBefore := hyperNodes(t), fabricLabels(t, "rw-n0")
	for i, n := range nodes { // every node now reports the other leaf
		upsertReport(t, report(n, fmt.Sprintf("%02x", 0xc1-i/3)))
	}
	heldAt := clock.t
	reconcileOnce(t, r)
	if diff := cmp.Diff(before, hyperNodes(t)); diff != "" {
		t.Errorf("HyperNodes rewritten although every node moved at once (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(labelsBefore, fabricLabels(t, "rw-n0")); diff != "" {
		t.Errorf("labels rewritten although every node moved at once (-before +after):\n%s", diff)
	}
	if got := gaugeValue(t, r.Metrics.rewritesHeld); got != 6 {
		t.Errorf("rewrites held = %v, want 6 (the six relabelled nodes)", got)
	}
	waitForLeaseEvent(t, key, ReasonRewritesHeld, "6 of 6 labelled nodes their topology labels")

	confirmDeletions(t, key, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	reconcileOnce(t, r)
	if diff := cmp.Diff(before, hyperNodes(t)); diff != "" {
		t.Fatalf("a confirmation dated 2099 let the rewrites go ahead (-before +after):\n%s", diff)
	}
	waitForLeaseEvent(t, key, ReasonConfirmationRefused, "dated more than 5m0s ahead")

	confirmDeletions(t, key, heldAt.Add(time.Second))
	reconcileOnce(t, r)
	if got := hyperNodes(t); cmp.Equal(before, got) {
		t.Fatalf("HyperNodes unchanged after the admin confirmed: %v", got)
	}
	if got := counterValue(r.Metrics.rewritesConfirmed.WithLabelValues("annotation")); got != 1 {
		t.Errorf("rewrite confirmations by annotation = %v, want 1", got)
	}
	if got := gaugeValue(t, r.Metrics.rewritesHeld); got != 0 {
		t.Errorf("rewrites held = %v after the confirmation, want 0", got)
	}
}

// TestTierRenumberingHeld turns NVLink domains into a tier under a written tree: every HyperNode keeps its name
// but changes tier, which is held (with MinCount below the count) until the same rewrites persist.
func TestTierRenumberingHeld(t *testing.T) {
	testenv.Require(t)
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, MinCount: 1, ConfirmAfter: time.Hour})
	for i, n := range []string{"tier-n0", "tier-n1", "tier-n2", "tier-n3"} {
		rep := report(n, fmt.Sprintf("%02x", 0xd0+i/2))
		rep.Spec.NVLinkDomain = fmt.Sprintf("7e0c6f4e-0000-4000-8000-00000000000%d.1", i/2)
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)
	before := hyperNodes(t)
	r.Config.AcceleratorDomains = true
	reconcileOnce(t, r)
	if diff := cmp.Diff(before, hyperNodes(t)); diff != "" {
		t.Fatalf("tiers renumbered at once (-before +after):\n%s", diff)
	}
	if got := gaugeValue(t, r.Metrics.rewritesHeld); got != 3 {
		t.Errorf("rewrites held = %v, want 3 (two leaves and the root change tier)", got)
	}
	clock.t = clock.t.Add(time.Hour)
	reconcileOnce(t, r)
	if got := len(hyperNodes(t)); got != 5 {
		t.Errorf("%d HyperNodes after the rewrites persisted an hour, want 5 (root, two leaves, two NVLink domains): %v", got, hyperNodes(t))
	}
	if got := counterValue(r.Metrics.rewritesConfirmed.WithLabelValues("persistence")); got != 1 {
		t.Errorf("rewrite confirmations by persistence = %v, want 1", got)
	}
}

// TestHoldLiftMidRestoreDeletesNothing lets every report vanish (the deletion guard holds), then brings them
// back a few at a time: when the hold lifts, the HyperNodes still gone get a new grace period instead of being
// deleted a moment before their reports return (which recreated them with a new UID).
func TestHoldLiftMidRestoreDeletesNothing(t *testing.T) {
	testenv.Require(t)
	var nodes []string
	for i := range 10 {
		nodes = append(nodes, fmt.Sprintf("restore-n%d", i))
	}
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, MinCount: 1}, nodes...)
	uids := hyperNodeUIDs(t)
	deleteReports(t, nodes...)
	reconcileOnce(t, r)
	clock.t = clock.t.Add(2 * time.Minute)
	reconcileOnce(t, r) // past the grace period: held
	if got := gaugeValue(t, r.Metrics.deletionsHeld); got != 11 {
		t.Fatalf("deletions held = %v, want 11", got)
	}
	for i, n := range nodes[:9] { // agents come back one after the other; the last one is slower
		upsertReport(t, report(n, fmt.Sprintf("%02x", 0xa0+i)))
		reconcileOnce(t, r)
	}
	upsertReport(t, report(nodes[9], fmt.Sprintf("%02x", 0xa0+9)))
	clock.t = clock.t.Add(10 * time.Second)
	reconcileOnce(t, r)
	if diff := cmp.Diff(uids, hyperNodeUIDs(t)); diff != "" {
		t.Errorf("HyperNodes deleted and recreated while the reports came back (-before +after UIDs):\n%s", diff)
	}
}

// hyperNodeUIDs maps each HyperNode to its UID.
func hyperNodeUIDs(t *testing.T) map[string]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, hn := range list.Items {
		out[hn.Name] = string(hn.UID)
	}
	return out
}
