package placer

import (
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
)

// testTwoGangsCompeteForLeaf: two gangs created together both want the tighter leaf; one gets it, the other
// the next leaf (the second is planned on top of the first's pinned, not yet bound pods), no node is shared,
// and a third gang with no room and nobody to preempt stays gated with its reason.
func testTwoGangsCompeteForLeaf(t *testing.T) {
	b := newBed(t)
	leaves := map[string][]string{"cl-leaf-a": {"cl-a1", "cl-a2"}, "cl-leaf-b": {"cl-b1", "cl-b2", "cl-b3"}}
	for l, nodes := range leaves {
		b.addNodes(nodes...)
		b.addHyperNode(l, 1, "leaf", nodes...)
	}
	b.addHyperNode("cl-spine", 2, "spine", "cl-leaf-a", "cl-leaf-b")
	must := map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"leaf","strategy":"MustGather"}]}`}
	for _, g := range []string{"x", "y"} {
		b.gang(g, 2, 8, "", map[string]string{wellknown.GangLabel: g, wellknown.SizeLabel: "2"}, must)
	}
	b.startPlacer()
	var used []string
	var leafOf []string
	for _, g := range []string{"x", "y"} {
		nodes := b.bound(g, 2, 30*time.Second)
		for l, ln := range leaves {
			if slices.Contains(ln, nodes[0]) {
				leafOf = append(leafOf, l)
				if !slices.Contains(ln, nodes[1]) {
					t.Errorf("gang %s spans leaves: %v", g, nodes)
				}
			}
		}
		used = append(used, nodes...)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(used)))) != 4 {
		t.Errorf("gangs share a node: %v", used)
	}
	if slices.Sort(leafOf); !slices.Equal(leafOf, []string{"cl-leaf-a", "cl-leaf-b"}) {
		t.Errorf("gangs in leaves %v, want one in each", leafOf)
	}
	b.gang("z", 2, 8, "", map[string]string{wellknown.GangLabel: "z", wellknown.SizeLabel: "2"}, must)
	b.event("z-0", ReasonUnplaceable, "no placement", 20*time.Second)
	for _, p := range b.pods("z") {
		if !Gated(&p) || p.Spec.NodeName != "" {
			t.Errorf("pod %s left the gate without room", p.Name)
		}
	}
}
