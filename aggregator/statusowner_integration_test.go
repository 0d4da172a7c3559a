package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// countLikeVolcano sets every HyperNode's status.nodeCount as Volcano's HyperNode controller does (one per
// member: a child HyperNode counts 1), by a plain status update under Volcano's field manager, where it
// differs; it returns how many it changed.
func countLikeVolcano(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	c := testenv.Shared.Client
	var list topologyv1alpha1.HyperNodeList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	changed := 0
	for i := range list.Items {
		hn := &list.Items[i]
		if want := int64(len(hn.Spec.Members)); hn.Status.NodeCount != want {
			hn.Status.NodeCount = want
			if err := c.Status().Update(ctx, hn, client.FieldOwner("vc-controller-manager")); err != nil {
				t.Fatalf("updating the status of %s as Volcano does: %v", hn.Name, err)
			}
			changed++
		}
	}
	return changed
}

// versions returns name -> resourceVersion of every HyperNode.
func versions(t *testing.T) map[string]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, hn := range list.Items {
		out[hn.Name] = hn.ResourceVersion
	}
	return out
}

// TestAnotherStatusWriterKeepsTheCount: Volcano's HyperNode controller (on by default) rewrites every
// HyperNode's status.nodeCount with its own meaning. Once it has, the aggregator leaves the status to it: no
// pass writes it back (before, the two rewrote it after each other for ever), through a steady pass, a
// restart and a leaf change, while spec stays fabricmap's. A HyperNode another writer made over fabricmap's
// nodes is counted and left alone.
func TestAnotherStatusWriterKeepsTheCount(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	t.Cleanup(func() { deleteAll(t) })
	ctx := context.Background()
	c := testenv.Shared.Client
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	for _, rep := range []*v1alpha1.NodeFabricReport{report("n1", "01"), report("n2", "01"), report("n3", "02")} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)
	if got := countLikeVolcano(t); got != 1 { // fabric: 3 nodes below, 2 members
		t.Fatalf("Volcano's count changed %d HyperNodes, want 1 (fabric)", got)
	}
	settled := versions(t)
	for step, pass := range []func() *Reconciler{
		func() *Reconciler { return r },                                    // the same aggregator
		func() *Reconciler { return newReconciler(t, time.Minute, clock) }, // a restart
	} {
		rr := pass()
		before := writes(rr)
		reconcileOnce(t, rr)
		if w := writes(rr) - before; w != 0 {
			t.Errorf("pass %d after Volcano counted: %v writes, want none", step, w)
		}
		if got := countLikeVolcano(t); got != 0 {
			t.Errorf("pass %d: Volcano had to count %d HyperNodes again: the aggregator rewrote their status", step, got)
		}
		if diff := cmp.Diff(settled, versions(t)); diff != "" {
			t.Errorf("pass %d: resourceVersions moved (-before +after):\n%s", step, diff)
		}
	}
	if got := counterValue(r.Metrics.statusYielded); got != 1 {
		t.Errorf("fabricmap_aggregator_hypernode_status_yielded_total = %v, want 1", got)
	}

	t.Run("a leaf change writes spec, and the status only where nobody else counts", func(t *testing.T) {
		upsertReport(t, report("n3", "01"))
		before := counterValue(r.Metrics.writes.WithLabelValues("status"))
		reconcileOnce(t, r)
		if got := hyperNodes(t)["sw-01"]; !equal(got, []string{"n1", "n2", "n3"}) {
			t.Fatalf("sw-01 = %v after n3 moved", got)
		}
		// sw-01 and sw-02 kept fabricmap's counts (equal to Volcano's so far): the move is written to them.
		if got := counterValue(r.Metrics.writes.WithLabelValues("status")) - before; got != 2 {
			t.Errorf("%v status writes for the move, want 2 (sw-01 and the emptied sw-02)", got)
		}
		countLikeVolcano(t)
		settled := versions(t)
		reconcileOnce(t, r)
		countLikeVolcano(t)
		reconcileOnce(t, r)
		if diff := cmp.Diff(settled, versions(t)); diff != "" {
			t.Errorf("after the move settled, resourceVersions moved (-before +after):\n%s", diff)
		}
	})

	t.Run("a HyperNode of another writer over fabricmap's nodes is counted and left alone", func(t *testing.T) {
		theirs := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "leaf-hn-0"},
			Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
				Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "^n[12]$"}}}}}}
		if err := c.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		version := theirs.ResourceVersion
		reconcileOnce(t, r)
		if got := gaugeValue(t, r.Metrics.foreignHyperNodes); got != 1 {
			t.Errorf("fabricmap_aggregator_foreign_hypernodes = %v, want 1", got)
		}
		var now topologyv1alpha1.HyperNode
		if err := c.Get(ctx, client.ObjectKey{Name: "leaf-hn-0"}, &now); err != nil {
			t.Fatalf("the other writer's HyperNode: %v", err)
		}
		if now.ResourceVersion != version {
			t.Errorf("the other writer's HyperNode was written (resourceVersion %s, was %s)", now.ResourceVersion, version)
		}
		if err := c.Delete(ctx, &now); err != nil {
			t.Fatal(err)
		}
		reconcileOnce(t, r)
		if got := gaugeValue(t, r.Metrics.foreignHyperNodes); got != 0 {
			t.Errorf("after it was deleted: fabricmap_aggregator_foreign_hypernodes = %v, want 0", got)
		}
	})
}
