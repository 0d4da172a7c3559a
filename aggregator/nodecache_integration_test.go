package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
)

// TestManagerCachesOnlyTheNodeKeysItReads runs the aggregator's manager on GPU-like Nodes (a hundred NFD
// labels each) placed by an admin's label source: the tree and fabricmap's labels follow the admin's keys,
// the manager's cache holds of each Node only the keys fabricmap reads, and another writer's HyperNode that
// selects fabricmap's nodes by a label the cache does not keep is still found (read live).
func TestManagerCachesOnlyTheNodeKeysItReads(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const leafKey, rackKey = "example.com/leaf", "example.com/rack"
	names := []string{"nc-n1", "nc-n2", "nc-n3"}
	for i, name := range names {
		l := map[string]string{leafKey: fmt.Sprintf("nc-l%d", i/2+1), rackKey: "r1", "kubernetes.io/hostname": name}
		for f := range 100 {
			l[fmt.Sprintf("feature.node.kubernetes.io/cpu-cpuid.F%03d", f)] = "true"
		}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	}
	theirs := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "nc-their-rack"},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{rackKey: "r1"}}}}}}}
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), theirs) })

	reg := prometheus.NewRegistry()
	conf := Config{Inference: pipeline.Inference{RootName: "fabric"}, NodeLabels: true, LabelKeys: hypernodegen.DefaultLabelKeys(), DeleteGracePeriod: time.Minute}
	src := &labels.Source{Keys: []string{leafKey}}
	mc := ManagerConfig{MetricsAddr: "0", HealthAddr: "0", Registry: reg}
	logs := &syncBuffer{}
	mgr, err := NewManager(testenv.Shared.Config, mc, conf, []sources.Spec{{Source: src, Interval: time.Second}}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("aggregator: %v", err)
		}
		if t.Failed() {
			t.Logf("aggregator log:\n%s", logs)
		}
	})

	leaf := hypernodegen.DefaultTierKeys[0]
	testenv.Eventually(t, time.Minute, "fabricmap labels each node with its admin-labelled leaf and finds the other writer's HyperNode", func() (bool, string) {
		for i, name := range names {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
				return false, err.Error()
			}
			if want := fmt.Sprintf("nc-l%d", i/2+1); n.Labels[leaf] != want {
				return false, fmt.Sprintf("%s: %s=%q, want %q", name, leaf, n.Labels[leaf], want)
			}
		}
		if got := gathered(t, reg, "fabricmap_aggregator_foreign_hypernodes"); got != 1 {
			return false, fmt.Sprintf("fabricmap_aggregator_foreign_hypernodes = %v, want 1", got)
		}
		return true, ""
	})
	for _, name := range names {
		var m metav1.PartialObjectMetadata
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		if err := mgr.GetCache().Get(ctx, client.ObjectKey{Name: name}, &m); err != nil {
			t.Fatal(err)
		}
		// The admin's leaf (the label source's key) and fabricmap's own tier labels; not the rack, the hostname
		// or the hundred features.
		if got, want := slices.Sorted(maps.Keys(m.Labels)), append([]string{leafKey}, hypernodegen.DefaultTierKeys[:2]...); !slices.Equal(got, want) {
			t.Errorf("%s: the cache holds labels %v, want %v", name, got, want)
		}
	}

	// A pass reads the cache's own Nodes, not copies (cachedlists.go): two passes see the same objects.
	r := &Reconciler{informers: mgr.GetCache()}
	first, err := r.stageEvidence().listNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.stageEvidence().listNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if first[name] == nil || first[name] != second[name] {
			t.Errorf("%s: two passes read %p and %p, want the cache's one object", name, first[name], second[name])
		}
	}
}
