package aggregator

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestUplinkLostAnnotation: the annotation's value reads back as it was written, in UTC; a value that is no
// JSON, or lacks the leaf or the time, is an error naming the node and the annotation.
func TestUplinkLostAnnotation(t *testing.T) {
	since := time.Date(2026, 11, 26, 10, 30, 0, 0, time.FixedZone("CET", 3600))
	l := health.LostUplink{Node: "n1", Leaf: "sw-leaf-a", Since: since}
	v := pipeline.UplinkLostValue(l)
	if want := `{"leaf":"sw-leaf-a","since":"2026-11-26T09:30:00Z"}`; v != want {
		t.Errorf("pipeline.UplinkLostValue = %s, want %s", v, want)
	}
	got, err := pipeline.ParseUplinkLost("n1", v)
	if err != nil || !got.Since.Equal(since) || got.Leaf != l.Leaf || got.Node != "n1" {
		t.Errorf("pipeline.ParseUplinkLost(%s) = %+v, %v; want %+v", v, got, err, l)
	}
	for _, tc := range []struct{ value, want string }{
		{"sw-leaf-a since noon", "annotation fabricmap.io/uplink-lost on node n1: invalid character"},
		{`{"leaf":"sw-leaf-a"}`, `annotation fabricmap.io/uplink-lost on node n1: want {"leaf": …, "since": …}, got {"leaf":"sw-leaf-a"}`},
		{`{"since":"2026-11-26T09:30:00Z"}`, "want {"},
		{`{"leaf":"a","since":"noon"}`, "annotation fabricmap.io/uplink-lost on node n1: parsing time"},
	} {
		if _, err := pipeline.ParseUplinkLost("n1", tc.value); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pipeline.ParseUplinkLost(%q) = %v, want an error with %q", tc.value, err, tc.want)
		}
	}
}

// TestLostUplinksFromNodes: only nodes that still have a report count, sorted; an unreadable value is an error
// and the others are still returned.
func TestLostUplinksFromNodes(t *testing.T) {
	since := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	value := pipeline.UplinkLostValue(health.LostUplink{Leaf: "sw-a", Since: since})
	annotations := map[string]map[string]string{
		"n2": {wellknown.UplinkLostAnnotation: value}, "n1": {wellknown.UplinkLostAnnotation: value, "other": "x"},
		"gone": {wellknown.UplinkLostAnnotation: value}, "bad": {wellknown.UplinkLostAnnotation: "?"}, "fine": {"other": "x"},
	}
	var reports []*v1alpha1.NodeFabricReport
	for _, n := range []string{"n2", "fine", "bad", "n1", "no-node"} {
		reports = append(reports, report(n))
	}
	got, err := pipeline.LostUplinksFromNodes(annotations, reports)
	want := []health.LostUplink{{Node: "n1", Leaf: "sw-a", Since: since}, {Node: "n2", Leaf: "sw-a", Since: since}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lost uplinks (-want +got):\n%s", diff)
	}
	if err == nil || !strings.Contains(err.Error(), "on node bad") {
		t.Errorf("error %v, want one naming node bad", err)
	}
}

// treeWith is a tree of the root fabric above one leaf per entry of leaves (leaf → its nodes).
func treeWith(leaves map[string][]string, unplaced ...string) *topology.Tree {
	t := topology.NewTree()
	root := &topology.Domain{Name: "fabric", Tier: 2, TierName: topology.TierNameRoot}
	_ = t.Add(root)
	for leaf, nodes := range leaves {
		_ = t.Add(&topology.Domain{Name: leaf, Tier: 1, TierName: topology.TierNameLeaf, Parent: "fabric", Nodes: nodes, Switches: []string{"mac:" + leaf}})
		root.Children = append(root.Children, leaf)
	}
	t.Unplaced = unplaced
	return t
}

// TestNoteUplinks follows nodes through passes: a node the previous tree placed that this one leaves unplaced
// while its report is used has lost its uplinks (the Lease says so once, for all found in the pass); it stays
// lost, its time kept, without more Events; a node never placed, or whose report is dropped, has not; a node
// a previous leader annotated keeps that time and brings no Event; a node placed again gets UplinkRestored.
func TestNoteUplinks(t *testing.T) {
	testenv.Require(t) // the Lease's Events read it (for its UID) from the API server
	start := time.Unix(1_800_000_000, 0)
	clock := &fakeClock{t: start}
	var events eventLog
	lease := types.NamespacedName{Namespace: "fabricmap", Name: "fabricmap-aggregator"}
	r := &Reconciler{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry()),
		Events: &events, Now: clock.now, Config: Config{DeletionGuard: &DeletionGuard{Lease: lease}}, Live: testenv.Shared.Client}
	earlier := start.Add(-time.Hour)
	nodes := map[string]*metav1.PartialObjectMetadata{}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5", "lonely"} {
		nodes[n] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}}
	}
	nodes["n5"].Annotations = map[string]string{wellknown.UplinkLostAnnotation: pipeline.UplinkLostValue(health.LostUplink{Leaf: "sw-old", Since: earlier})}
	reports := func(names ...string) []*v1alpha1.NodeFabricReport {
		var out []*v1alpha1.NodeFabricReport
		for _, n := range names {
			out = append(out, report(n))
		}
		return out
	}
	all := reports("n1", "n2", "n3", "n4", "n5", "lonely")
	for i, p := range []struct {
		name       string
		tree, prev *topology.Tree
		dropped    []string
		want       map[string]health.LostUplink
		wantEvents []string
	}{{
		name: "sw-a fails: n1 and n2 lost it; lonely was never placed, n4's report is dropped, n5 was lost before",
		prev: treeWith(map[string][]string{"sw-a": {"n1", "n2", "n4"}, "sw-b": {"n3"}}),
		tree: treeWith(map[string][]string{"sw-b": {"n3"}}, "lonely", "n1", "n2", "n5"), dropped: []string{"n4"},
		want: map[string]health.LostUplink{
			"n1": {Node: "n1", Leaf: "sw-a", Since: start}, "n2": {Node: "n2", Leaf: "sw-a", Since: start},
			"n5": {Node: "n5", Leaf: "sw-old", Since: earlier},
		},
		wantEvents: []string{"Lease/fabricmap-aggregator Warning NodesLostUplinks: 2 nodes lost all uplink evidence (no report of theirs names a switch that places them): n1, n2; leaves: sw-a (2). They have no topology now; `fabricmap get health` lists them"},
	}, {
		name: "nothing new: nothing said, the times kept",
		prev: treeWith(map[string][]string{"sw-b": {"n3"}}),
		tree: treeWith(map[string][]string{"sw-b": {"n3"}}, "lonely", "n1", "n2", "n5"),
		want: map[string]health.LostUplink{
			"n1": {Node: "n1", Leaf: "sw-a", Since: start}, "n2": {Node: "n2", Leaf: "sw-a", Since: start},
			"n5": {Node: "n5", Leaf: "sw-old", Since: earlier},
		},
	}, {
		name: "n1 is placed again, behind sw-b; n2's report is dropped",
		prev: treeWith(map[string][]string{"sw-b": {"n3"}}),
		tree: treeWith(map[string][]string{"sw-b": {"n1", "n3"}}, "lonely", "n5"), dropped: []string{"n2"},
		want: map[string]health.LostUplink{"n5": {Node: "n5", Leaf: "sw-old", Since: earlier}},
		wantEvents: []string{"Node/n1 Normal UplinkRestored: the node's report places it again, in sw-b; it had no uplink evidence since " +
			start.UTC().Format(time.RFC3339)},
	}} {
		clock.t = start.Add(time.Duration(i) * time.Minute)
		events = nil
		r.stageHealth().noteUplinks(context.Background(), p.tree, p.prev, all, p.dropped, nodes)
		if diff := cmp.Diff(p.want, r.health.lostUplinks); diff != "" && !(len(p.want) == 0 && len(r.health.lostUplinks) == 0) {
			t.Errorf("%s: lost uplinks (-want +got):\n%s", p.name, diff)
		}
		if diff := cmp.Diff(p.wantEvents, []string(events)); diff != "" {
			t.Errorf("%s: Events (-want +got):\n%s", p.name, diff)
		}
		if got := gaugeValue(t, r.Metrics.nodesWithoutUplink); got != float64(len(p.want)) {
			t.Errorf("%s: nodes without uplink = %v, want %d", p.name, got, len(p.want))
		}
	}
}

// TestWithUplinkLost: the annotation is wanted on each lost node with a Node object (its labels as they are
// when the pass wants none), and its removal on a node that carries it as fabricmap set it.
func TestWithUplinkLost(t *testing.T) {
	since := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	l := health.LostUplink{Node: "lost", Leaf: "sw-a", Since: since}
	value := pipeline.UplinkLostValue(l)
	const tier = "fabric.topograph.run/tier-0"
	owned := func(n *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
		n.ManagedFields = append(n.ManagedFields, metav1.ManagedFieldsEntry{Manager: wellknown.LabelFieldManager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:` + wellknown.UplinkLostAnnotation + `":{}}}}`)}})
		n.Annotations = map[string]string{wellknown.UplinkLostAnnotation: value}
		return n
	}
	nodes := map[string]*metav1.PartialObjectMetadata{
		"lost":     labelledNode("lost", map[string]string{tier: "sw-a"}, tier),
		"back":     owned(labelledNode("back", map[string]string{tier: "sw-b"}, tier)),
		"by-hand":  labelledNode("by-hand", nil),
		"no-loss":  labelledNode("no-loss", map[string]string{tier: "sw-b"}, tier),
		"placed-b": owned(labelledNode("placed-b", map[string]string{tier: "sw-b"}, tier)),
	}
	nodes["by-hand"].Annotations = map[string]string{wellknown.UplinkLostAnnotation: "set by an admin"}
	r := &Reconciler{health: healthStage{lostUplinks: map[string]health.LostUplink{"lost": l, "no-node": {Node: "no-node", Leaf: "sw-a", Since: since}}}}
	desired := map[string]map[string]string{"placed-b": {tier: "sw-c"}}
	got := r.stageHealth().withUplinkLost(desired, nodes, []string{tier})
	if diff := cmp.Diff(map[string]string{"lost": value}, got); diff != "" {
		t.Errorf("annotations wanted (-want +got):\n%s", diff)
	}
	want := map[string]map[string]string{"lost": {tier: "sw-a"}, "back": {tier: "sw-b"}, "placed-b": {tier: "sw-c"}}
	if diff := cmp.Diff(want, desired); diff != "" {
		t.Errorf("desired labels (-want +got):\n%s", diff)
	}
	for n, wantDiffers := range map[string]bool{"lost": true, "back": true, "by-hand": false, "no-loss": false} {
		if got := annotationDiffers(nodes[n], wellknown.UplinkLostAnnotation, got[n]); got != wantDiffers {
			t.Errorf("annotationDiffers(%s) = %v, want %v", n, got, wantDiffers)
		}
	}
}
