package placer

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

// testAvoidDegraded: the placer keeps new gangs off nodes whose link is sick and prefers a leaf with healthy
// uplinks, and says both in the gang's Event; a gang that fits only on a sick node stays gated with the reason,
// and a placer with --avoid-degraded=false places it there.
func testAvoidDegraded(t *testing.T) {
	t.Run("healthy leaf, sick node skipped", func(t *testing.T) {
		b := newBed(t)
		leaves := map[string][]string{"ad-leaf-a": {"ad-a1", "ad-a2"}, "ad-leaf-b": {"ad-b1", "ad-b2"}, "ad-leaf-c": {"ad-c1", "ad-c2"}}
		for _, l := range slices.Sorted(maps.Keys(leaves)) {
			b.addNodes(leaves[l]...)
			b.addHyperNode(l, 1, "leaf", leaves[l]...)
		}
		b.addHyperNode("ad-spine", 2, "spine", "ad-leaf-a", "ad-leaf-b", "ad-leaf-c")
		// leaf-a would win on name order, but one of its uplinks is degraded; leaf-c holds the gang only with
		// c1, whose own link is down.
		b.annotateHyperNode("ad-leaf-a", wellknown.DegradedUplinksAnnotation, "1")
		b.labelNode("ad-c1", wellknown.LinkHealthLabel, wellknown.LinkHealthDown)
		b.startPlacer()
		b.gang("g", 2, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
		nodes := b.bound("g", 2, 30*time.Second)
		if !slices.Equal(slices.Sorted(slices.Values(nodes)), leaves["ad-leaf-b"]) {
			t.Fatalf("ranks on %v, want the healthy leaf's %v", nodes, leaves["ad-leaf-b"])
		}
		b.event("g-0", ReasonPlaced, "; leaf ad-leaf-a (1 degraded uplink) lost to a healthier leaf at the same tier;", 10*time.Second)
		b.event("g-0", ReasonPlaced, "; nodes skipped for degraded links (--avoid-degraded): ad-c1 (down)", time.Second)
	})
	t.Run("fits only on a sick node", func(t *testing.T) {
		b := newBed(t)
		b.addNodes("ad-d1", "ad-d2")
		b.addHyperNode("ad-leaf-d", 1, "leaf", "ad-d1", "ad-d2")
		b.labelNode("ad-d2", wellknown.LinkHealthLabel, wellknown.LinkHealthDegraded)
		stop := b.startPlacer()
		b.gang("g", 2, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
		b.event("g-0", ReasonUnplaceable, "no placement even after preempting every eligible gang (no running gang is preemptible "+
			"and of lower priority); nodes skipped for degraded links (--avoid-degraded): ad-d2 (degraded)", 20*time.Second)
		for _, p := range b.pods("g") {
			if !Gated(&p) || p.Spec.NodeName != "" {
				t.Fatalf("pod %s placed (node %q) although only a sick node has room", p.Name, p.Spec.NodeName)
			}
		}
		stop()
		o := testOptions()
		o.AvoidDegraded = false
		b.startPlacerOptions(o)
		nodes := b.bound("g", 2, 30*time.Second)
		if !slices.Equal(slices.Sorted(slices.Values(nodes)), []string{"ad-d1", "ad-d2"}) {
			t.Fatalf("ranks on %v, want ad-d1 and ad-d2", nodes)
		}
	})
}

// labelNode sets a label on a node.
func (b *bed) labelNode(name, key, value string) {
	b.t.Helper()
	n := &corev1.Node{}
	if err := b.c.Get(b.ctx, client.ObjectKey{Name: name}, n); err != nil {
		b.t.Fatal(err)
	}
	n.Labels[key] = value
	if err := b.c.Update(b.ctx, n); err != nil {
		b.t.Fatalf("labelling node %s: %v", name, err)
	}
}

// annotateHyperNode sets an annotation on a HyperNode.
func (b *bed) annotateHyperNode(name, key, value string) {
	b.t.Helper()
	hn := &topologyv1alpha1.HyperNode{}
	if err := b.c.Get(b.ctx, client.ObjectKey{Name: name}, hn); err != nil {
		b.t.Fatal(err)
	}
	if hn.Annotations == nil {
		hn.Annotations = map[string]string{}
	}
	hn.Annotations[key] = value
	if err := b.c.Update(b.ctx, hn); err != nil {
		b.t.Fatalf("annotating HyperNode %s: %v", name, err)
	}
}
