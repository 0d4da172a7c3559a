package placer

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestStaleTreeTakesNodesFromTheCluster: a fabric read earlier (the last consistent tree) gives only the
// domains; a node of it that is gone has nothing, and one cordoned, not Ready or tainted now takes no pod,
// so a gang that must stay in one leaf goes to the leaf whose nodes are all usable now. A node that joined
// since is outside the fabric and unused.
func TestStaleTreeTakesNodesFromTheCluster(t *testing.T) {
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "spine", Tier: 2, Children: []string{"leaf-a", "leaf-b"}},
		{Name: "leaf-a", Tier: 1, Parent: "spine", Nodes: []string{"gone", "cordoned", "not-ready", "tainted", "ok-a"}},
		{Name: "leaf-b", Tier: 1, Parent: "spine", Nodes: []string{"b1", "b2"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	f, err := compileTree(tr)
	if err != nil {
		t.Fatal(err)
	}
	gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}
	node := func(name string, edit func(*corev1.Node)) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: gpus,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		if edit != nil {
			edit(&n)
		}
		return n
	}
	nodes := []corev1.Node{
		node("cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("not-ready", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionUnknown }),
		node("tainted", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("ok-a", nil), node("b1", nil), node("b2", nil), node("new", nil),
	}
	st := snapshotOn(f, nodes, nil, time.Now())
	c, ignored, err := st.Cluster("ns/g", nil, Preemption{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new"}, ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	free := map[string]int64{}
	for _, n := range f.Nodes() {
		free[n] = c.Free(n, "nvidia.com/gpu")
	}
	want := map[string]int64{"gone": 0, "cordoned": 0, "not-ready": 0, "tainted": 0, "ok-a": 8, "b1": 8, "b2": 8}
	if diff := cmp.Diff(want, free); diff != "" {
		t.Errorf("free GPUs (-want +got):\n%s", diff)
	}
	plan, err := c.Place(placement.Gang{Name: "ns/g", Pods: 2, Request: placement.Resources{"nvidia.com/gpu": 8, "pods": 1}, HardTier: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(plan.Ranks)); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("gang on %v, want leaf-b's b1 and b2", got)
	}
}

// testTreeInTransition: while the HyperNodes are inconsistent (a leaf member of both the spine and the root;
// then a node in two leaves), the placer places with the last consistent tree, each gang inside one leaf of
// it, says so (fabricmap_placer_tree_stale 1, a StaleTopology Event, the decision's explanation), and goes back
// to the current tree once it is consistent again (the gauge 0).
func testTreeInTransition(t *testing.T) {
	b := newBed(t)
	leaves := map[string][]string{"tt-leaf-a": {"tt-a1", "tt-a2"}, "tt-leaf-b": {"tt-b1", "tt-b2"}, "tt-leaf-c": {"tt-c1", "tt-c2"}}
	names := slices.Sorted(maps.Keys(leaves))
	for _, l := range names {
		b.addNodes(leaves[l]...)
		b.addHyperNode(l, 1, "leaf", leaves[l]...)
	}
	b.addHyperNode("tt-spine", 2, "spine", names...)
	b.addHyperNode("tt-root", 3, "root", "tt-spine")
	o := testOptions()
	reg := prometheus.NewRegistry()
	o.Registry = reg
	b.startPlacerOptions(o)
	must := map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"leaf","strategy":"MustGather"}]}`}
	// inLeaf waits for the gang's two pods to bind and returns the leaf holding both.
	inLeaf := func(gang string) string {
		t.Helper()
		b.gang(gang, 2, 8, "", map[string]string{wellknown.GangLabel: gang, wellknown.SizeLabel: "2"}, must)
		nodes := b.bound(gang, 2, 30*time.Second)
		for _, l := range names {
			if slices.Equal(slices.Sorted(slices.Values(nodes)), leaves[l]) {
				return l
			}
		}
		t.Fatalf("gang %s on %v: not the two nodes of one leaf of the consistent tree %v", gang, nodes, leaves)
		return ""
	}
	staleIs := func(want float64) {
		t.Helper()
		b.eventually(20*time.Second, fmt.Sprintf("fabricmap_placer_tree_stale %v", want), func() (bool, string) {
			got := metricValue(t, reg, "fabricmap_placer_tree_stale")
			return got == want, fmt.Sprintf("fabricmap_placer_tree_stale %v", got)
		})
	}

	used := map[string]bool{inLeaf("g1"): true}
	staleIs(0)

	// A leaf is a member of both the spine and the root.
	b.setMembers("tt-root", topologyv1alpha1.MemberTypeHyperNode, "tt-spine", "tt-leaf-a")
	staleIs(1)
	l := inLeaf("g2")
	if used[l] {
		t.Fatalf("gang g2 in %s, which g1 holds", l)
	}
	used[l] = true
	b.event("g2-0", ReasonStaleTopology, `is a member of both "tt-root" and "tt-spine"`, 10*time.Second)
	if d, _ := decisionOf(&b.pods("g2")[0]); !strings.Contains(d.Explanation, "planned on the last consistent topology tree") {
		t.Errorf("g2's explanation %q does not say it was planned on the last consistent tree", d.Explanation)
	}
	b.setMembers("tt-root", topologyv1alpha1.MemberTypeHyperNode, "tt-spine")
	staleIs(0)

	// A node of the free leaf is in a full leaf too.
	var free, full string
	for _, l := range names {
		if used[l] {
			full = l
		} else {
			free = l
		}
	}
	b.setMembers(full, topologyv1alpha1.MemberTypeNode, append(slices.Clone(leaves[full]), leaves[free][0])...)
	staleIs(1)
	if l := inLeaf("g3"); l != free {
		t.Fatalf("gang g3 in %s, want the free leaf %s", l, free)
	}
	b.event("g3-0", ReasonStaleTopology, "node is in two domains", 10*time.Second)
	if n := metricValue(t, reg, "fabricmap_placer_tree_inconsistent_reads_total"); n < 2 {
		t.Errorf("fabricmap_placer_tree_inconsistent_reads_total %v, want 2 or more", n)
	}
	b.setMembers(full, topologyv1alpha1.MemberTypeNode, leaves[full]...)
	staleIs(0)
}

// testNoConsistentTree: when the placer has read no consistent tree since it started, it places nothing and
// the gang's Event and the pass's error name the inconsistency; once the tree is consistent the gang binds.
func testNoConsistentTree(t *testing.T) {
	b := newBed(t)
	b.addNodes("nt-n1", "nt-n2")
	b.addHyperNode("nt-leaf-a", 1, "leaf", "nt-n1", "nt-n2")
	b.addHyperNode("nt-leaf-b", 1, "leaf", "nt-n2")
	o := testOptions()
	reg := prometheus.NewRegistry()
	o.Registry = reg
	b.startPlacerOptions(o)
	b.gang("g", 2, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
	b.event("g-0", ReasonUnplaceable, "no consistent tree has been read since the placer started: the topology: tree.nodes[nt-n2]: "+
		`node is in two domains: "nt-leaf-a" and "nt-leaf-b"`, 20*time.Second)
	for _, p := range b.pods("g") {
		if !Gated(&p) || p.Spec.NodeName != "" {
			t.Fatalf("pod %s placed (node %q) with no consistent tree", p.Name, p.Spec.NodeName)
		}
	}
	if got := metricValue(t, reg, "fabricmap_placer_tree_stale"); got != 0 {
		t.Errorf("fabricmap_placer_tree_stale %v with no tree to place on, want 0", got)
	}
	if got := metricValue(t, reg, "fabricmap_placer_tree_inconsistent_reads_total"); got < 1 {
		t.Errorf("fabricmap_placer_tree_inconsistent_reads_total %v, want 1 or more", got)
	}
	// The pass itself, as a fresh placer runs it.
	r := &Reconciler{Reader: b.c, Client: b.c, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry())}
	_, _, err := r.read(b.ctx)
	if want := "the topology tree is inconsistent and no consistent tree has been read since the placer started: the topology: " +
		`tree.nodes[nt-n2]: node is in two domains: "nt-leaf-a" and "nt-leaf-b"`; err == nil || err.Error() != want {
		t.Errorf("read: %v, want %s", err, want)
	}
	if err := b.c.Delete(b.ctx, &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "nt-leaf-b"}}); err != nil {
		t.Fatal(err)
	}
	b.bound("g", 2, 30*time.Second)
}

// setMembers sets a HyperNode's members, all of one type, selected by name.
func (b *bed) setMembers(name string, typ topologyv1alpha1.MemberType, members ...string) {
	b.t.Helper()
	hn := &topologyv1alpha1.HyperNode{}
	if err := b.c.Get(b.ctx, client.ObjectKey{Name: name}, hn); err != nil {
		b.t.Fatal(err)
	}
	hn.Spec.Members = nil
	for _, m := range members {
		hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: typ,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: m}}})
	}
	if err := b.c.Update(b.ctx, hn); err != nil {
		b.t.Fatalf("setting the members of HyperNode %s: %v", name, err)
	}
}

// metricValue is the value of an unlabelled gauge or counter in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name || len(f.GetMetric()) != 1 {
			continue
		}
		m := f.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}
