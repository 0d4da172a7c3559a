package aggregator

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// ownedReport is a report with the owner reference the agent sets: the Node, by name and UID.
func ownedReport(t *testing.T, node *corev1.Node, switches ...string) *v1alpha1.NodeFabricReport {
	t.Helper()
	r := report(node.Name, switches...)
	r.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	return r
}

func createNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := testenv.Shared.Client.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	// A Node left behind, with the labels fabricmap wrote, would be a node without topology in the next test.
	t.Cleanup(func() { deleteNodeNamed(t, name) })
	return n
}

func deleteNode(t *testing.T, n *corev1.Node) {
	t.Helper()
	if err := testenv.Shared.Client.Delete(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

func reportExists(t *testing.T, name string) bool {
	t.Helper()
	err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &v1alpha1.NodeFabricReport{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// A deleted node's report goes, and the node leaves its domain; a node deleted and registered again (new UID)
// loses the old report too. A report without a Node owner is left alone.
func TestReportsOfDeletedNodesAreRemoved(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	keep, gone, reborn := createNode(t, "orphan-keep"), createNode(t, "orphan-gone"), createNode(t, "orphan-reborn")
	for _, rep := range []*v1alpha1.NodeFabricReport{ownedReport(t, keep, "07"), ownedReport(t, gone, "07"),
		ownedReport(t, reborn, "07"), report("orphan-handmade", "07")} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)
	if got := hyperNodes(t)["sw-07"]; !equal(got, []string{"orphan-gone", "orphan-handmade", "orphan-keep", "orphan-reborn"}) {
		t.Fatalf("sw-07 = %v before any node left", got)
	}

	deleteNode(t, gone)
	deleteNode(t, reborn)
	createNode(t, "orphan-reborn") // same name, new UID
	reconcileOnce(t, r)

	for name, want := range map[string]bool{"orphan-keep": true, "orphan-handmade": true, "orphan-gone": false, "orphan-reborn": false} {
		if got := reportExists(t, name); got != want {
			t.Errorf("report %s exists = %v, want %v", name, got, want)
		}
	}
	if got := hyperNodes(t)["sw-07"]; !equal(got, []string{"orphan-handmade", "orphan-keep"}) {
		t.Errorf("sw-07 = %v, want the deleted nodes gone from it", got)
	}
	if n := counterValue(r.Metrics.writes.WithLabelValues("delete-report")); n != 2 {
		t.Errorf("report deletions counted = %v, want 2", n)
	}
}
