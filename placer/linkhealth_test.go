package placer

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestSnapshotAvoidsDegraded: under AvoidDegraded, the snapshot makes nodes labelled with a degraded or down
// link unavailable (and says which it skipped: those the gang could use otherwise, with room for a pod);
// without it they take pods like any other. Pods already on a sick node still count.
func TestSnapshotAvoidsDegraded(t *testing.T) {
	type node struct {
		health      string // LinkHealthLabel's value; "" for none
		cordoned    bool
		usedGPUs    int64 // by a pod bound there
		outsideTree bool
	}
	nodes := map[string]node{
		"ok": {}, "deg": {health: wellknown.LinkHealthDegraded}, "down": {health: wellknown.LinkHealthDown},
		"odd": {health: "flapping"}, "cordoned-deg": {health: wellknown.LinkHealthDegraded, cordoned: true},
		"full-deg": {health: wellknown.LinkHealthDegraded, usedGPUs: 8}, "half-down": {health: wellknown.LinkHealthDown, usedGPUs: 4},
		"outside-deg": {health: wellknown.LinkHealthDegraded, outsideTree: true},
	}
	tr := topology.NewTree()
	leaf := &topology.Domain{Name: "leaf", Tier: 1}
	var objs []corev1.Node
	var bound []corev1.Pod
	for name, n := range nodes {
		if !n.outsideTree {
			leaf.Nodes = append(leaf.Nodes, name)
		}
		o := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{Unschedulable: n.cordoned},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}}
		if n.health != "" {
			o.Labels[wellknown.LinkHealthLabel] = n.health
		}
		objs = append(objs, o)
		if n.usedGPUs > 0 {
			p := pod("on-"+name, n.usedGPUs, nil, nil)
			p.Spec.NodeName = name
			bound = append(bound, *p)
		}
	}
	if err := tr.Add(leaf); err != nil {
		t.Fatal(err)
	}
	request := placement.Resources{"nvidia.com/gpu": 4}
	for _, tc := range []struct {
		name        string
		avoid       bool
		wantSlots   map[string]int
		wantSkipped []string
	}{{
		name:        "avoid degraded",
		avoid:       true,
		wantSlots:   map[string]int{"ok": 2, "deg": 0, "down": 0, "odd": 2, "cordoned-deg": 0, "full-deg": 0, "half-down": 0},
		wantSkipped: []string{"deg (degraded)", "down (down)", "half-down (down)"},
	}, {
		name:      "use degraded",
		wantSlots: map[string]int{"ok": 2, "deg": 2, "down": 2, "odd": 2, "cordoned-deg": 0, "full-deg": 0, "half-down": 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := NewSnapshot(tr, objs, bound, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !st.AvoidDegraded {
				t.Fatal("NewSnapshot does not avoid degraded nodes by default")
			}
			st.AvoidDegraded = tc.avoid
			c, ignored, err := st.Cluster("ns/g", nil, Preemption{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"outside-deg"}, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
			slots := map[string]int{}
			for i, n := range c.Slots(request) {
				slots[st.Fabric().Nodes()[i]] = n
			}
			if diff := cmp.Diff(tc.wantSlots, slots); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, st.SkippedForLinks("ns/g", nil, request)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSkippedNote: the note names the first maxNamedNodes nodes and counts the rest.
func TestSkippedNote(t *testing.T) {
	var many []string
	for i := range maxNamedNodes + 2 {
		many = append(many, fmt.Sprintf("n%d (down)", i))
	}
	for _, tc := range []struct {
		skipped []string
		want    string
	}{
		{nil, ""},
		{[]string{"a (degraded)", "b (down)"}, "; nodes skipped for degraded links (--avoid-degraded): a (degraded), b (down)"},
		{many, "; nodes skipped for degraded links (--avoid-degraded): n0 (down), n1 (down), n2 (down), n3 (down), n4 (down), " +
			"n5 (down), n6 (down), n7 (down) and 2 more"},
	} {
		if diff := cmp.Diff(tc.want, skippedNote(tc.skipped)); diff != "" {
			t.Errorf("skippedNote(%q) (-want +got):\n%s", tc.skipped, diff)
		}
	}
}
