package placer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// testTreeFromClusterNetworkTopology: with no HyperNodes, the tree comes from Koordinator's
// ClusterNetworkTopology and the node labels, and a MustGather layer keeps the gang in one block.
func testTreeFromClusterNetworkTopology(t *testing.T) {
	b := newBed(t)
	blocks := map[string][]string{"blk-a": {"cnt-a1", "cnt-a2"}, "blk-b": {"cnt-b1", "cnt-b2", "cnt-b3"}}
	for blk, nodes := range blocks {
		b.addNodes(nodes...)
		for _, n := range nodes {
			b.label(n, map[string]string{"example.com/block": blk, "example.com/spine": "spine-1"})
		}
	}
	cnt := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"networkTopologySpec": []any{
		map[string]any{"topologyLayer": "SpineLayer", "parentTopologyLayer": "ClusterTopologyLayer", "labelKey": []any{"example.com/spine"}},
		map[string]any{"topologyLayer": "BlockLayer", "parentTopologyLayer": "SpineLayer", "labelKey": []any{"example.com/block"}},
		map[string]any{"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
	}}}}
	cnt.SetGroupVersionKind(hypernodegen.ClusterNetworkTopologyGVK)
	cnt.SetName(hypernodegen.ClusterNetworkTopologyName)
	b.create(cnt)
	t.Cleanup(func() { _ = b.c.Delete(b.ctx, cnt) })
	// One GPU too many for block a alone, so the gang must take block b, whole.
	b.addPod(podSpec{name: "other", gpus: 1, node: "cnt-a1"})
	b.startPlacer()
	b.gang("g", 3, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "3"},
		map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGather"}]}`})
	nodes := b.bound("g", 3, 30*time.Second)
	if unitOf([][]string{blocks["blk-b"]}, nodes) != 0 {
		t.Fatalf("gang on %v, want all of blk-b", nodes)
	}
}

// label adds labels to a node.
func (b *bed) label(node string, labels map[string]string) {
	b.t.Helper()
	if err := updateNode(b.ctx, b.c, node, func(n *corev1.Node) bool {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range labels {
			n.Labels[k] = v
		}
		return true
	}); err != nil {
		b.t.Fatal(err)
	}
}
