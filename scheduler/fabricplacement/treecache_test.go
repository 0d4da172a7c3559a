package fabricplacement

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// TestTreeCache reads the tree once for unchanged nodes, keeps it for a node object replaced with the same
// topology labels, and reads it again when a node's leaf changes, a node comes or a node goes.
func TestTreeCache(t *testing.T) {
	infos := func(nodes ...*corev1.Node) []fwk.NodeInfo {
		var out []fwk.NodeInfo
		for _, n := range nodes {
			ni := framework.NewNodeInfo()
			ni.SetNode(n)
			out = append(out, ni)
		}
		return out
	}
	a := testNode("a", "leaf-1", "spine-1", nil)
	b := testNode("b", "leaf-1", "spine-1", nil)
	c := testNode("c", "leaf-2", "spine-1", nil)
	bStatus := b.DeepCopy() // a status update: a new object, the same labels
	bStatus.Labels["unrelated"] = "x"
	bMoved := b.DeepCopy()
	bMoved.Labels[keys.Tiers[0]] = "leaf-2"

	var cache treeCache
	var last *labelTree
	for _, step := range []struct {
		name  string
		nodes []fwk.NodeInfo
		keys  *hypernodegen.LabelKeys // the keys given; nil: detected
		read  bool                    // whether the tree is read again
		leafB string                  // the domain above node b
	}{
		{"first", infos(a, b, c), nil, true, "leaf-1"},
		{"unchanged", infos(a, b, c), nil, false, "leaf-1"},
		{"b's object replaced, same labels", infos(a, bStatus, c), nil, false, "leaf-1"},
		{"b moved to leaf-2", infos(a, bMoved, c), nil, true, "leaf-2"},
		{"c gone", infos(a, bMoved), nil, true, "leaf-2"},
		{"c back", infos(a, bMoved, c), nil, true, "leaf-2"},
		{"the aggregator states its keys", infos(a, bMoved, c), &keys, true, "leaf-2"},
		{"the same keys", infos(a, bMoved, c), &keys, false, "leaf-2"},
	} {
		lt, f, _, err := cache.get(step.nodes, step.keys)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if read := lt != last; read != step.read {
			t.Errorf("%s: tree read again %v; want %v", step.name, read, step.read)
		}
		if got := f.NodeDomains("b"); len(got) == 0 || got[0] != step.leafB {
			t.Errorf("%s: node b's domains %v; want %s first", step.name, got, step.leafB)
		}
		last = lt
	}
}
