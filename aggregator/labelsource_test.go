package aggregator

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
)

// TestLabelSourceBuildsTheTreeFromAdminLabels labels Nodes in the real API server with an admin's own keys
// (spine above leaf) and no reports: the HyperNodes follow the labels, a node with a partial path is left
// out, and fabricmap's own label keys are refused as a source.
func TestLabelSourceBuildsTheTreeFromAdminLabels(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	const spine, leaf = "example.com/spine", "example.com/leaf"
	for name, l := range map[string]map[string]string{
		"lbl-n1": {spine: "s1", leaf: "l1"},
		"lbl-n2": {spine: "s1", leaf: "l2"},
		"lbl-n3": {spine: "s2", leaf: "l3"},
		"lbl-n4": {leaf: "l3"}, // no spine label: a partial path is not guessed
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
		if err := testenv.Shared.Client.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = testenv.Shared.Client.Delete(context.Background(), n) })
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: &labels.Source{Nodes: NodeLister(testenv.Shared.Client), Keys: []string{spine, leaf}}}}
	reconcileOnce(t, r)
	// s2 holds one leaf only, so topology.Build lets l3 stand for it (a one-child domain adds no grouping).
	want := map[string][]string{
		"fabric": {"l3", "s1"},
		"s1":     {"l1", "l2"},
		"l1":     {"lbl-n1"},
		"l2":     {"lbl-n2"},
		"l3":     {"lbl-n3"},
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Errorf("HyperNodes = %v, want %v", got, want)
	}
	if err := ValidateLabelSourceKeys([]string{hypernodegen.DefaultTierKeys[0]}, hypernodegen.DefaultLabelKeys()); err == nil {
		t.Error("a key fabricmap writes was accepted as a label-source key")
	}
}
