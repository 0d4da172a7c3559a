package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestHyperNodeLagGuardLetsAChangeThrough: a HyperNode whose cache still shows the version from before this
// reconciler's last write of it is not written again with the same content, but a changed wish is written at
// once. Before the guard compared what was written, a HyperNode whose cache kept that version (an apply the API
// server found unchanged brings no event) held every later change of it back: members added to a leaf were
// never written.
func TestHyperNodeLagGuardLetsAChangeThrough(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Now()})
	hw := &r.stageWrite().hyperNodes
	leaf := func(members ...string) *topologyv1alpha1.HyperNode {
		hn := &topologyv1alpha1.HyperNode{TypeMeta: metav1.TypeMeta{APIVersion: topologyv1alpha1.SchemeGroupVersion.String(), Kind: "HyperNode"},
			ObjectMeta: metav1.ObjectMeta{Name: "lag-leaf", Labels: map[string]string{wellknown.ManagedByLabel: wellknown.ManagedByValue}},
			Spec:       topologyv1alpha1.HyperNodeSpec{Tier: 1}}
		for _, m := range members {
			hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
				Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: m}}})
		}
		hn.Status.NodeCount = int64(len(members))
		return hn
	}
	live := func() *topologyv1alpha1.HyperNode {
		var hn topologyv1alpha1.HyperNode
		if err := c.Get(ctx, client.ObjectKey{Name: "lag-leaf"}, &hn); err != nil {
			t.Fatal(err)
		}
		return &hn
	}
	members := func(hn *topologyv1alpha1.HyperNode) []string {
		var out []string
		for _, m := range hn.Spec.Members {
			out = append(out, m.Selector.ExactMatch.Name)
		}
		return out
	}
	if err := hw.applyHyperNode(ctx, leaf("n1"), nil, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), live()) })
	cur := live()
	// The cache shows cur, and the last write of n1 alone was made from it (an apply that changed nothing).
	hw.written.note("lag-leaf", hyperNodeWrite(leaf("n1")), cur.ResourceVersion)

	if err := hw.applyHyperNode(ctx, leaf("n1"), cur, ""); err != nil {
		t.Fatal(err)
	}
	if got := live().ResourceVersion; got != cur.ResourceVersion {
		t.Errorf("the same write was sent again while the cache lags: version %s, want %s", got, cur.ResourceVersion)
	}
	if err := hw.applyHyperNode(ctx, leaf("n1", "n2"), cur, ""); err != nil {
		t.Fatal(err)
	}
	got := live()
	if diff := cmp.Diff([]string{"n1", "n2"}, members(got)); diff != "" {
		t.Errorf("a changed wish was held back while the cache lags (-want +got members):\n%s", diff)
	}
	if got.Status.NodeCount != 2 {
		t.Errorf("node count %d, want 2", got.Status.NodeCount)
	}
}
