package hypernodegen

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
)

// dualRackTree is one GB200 NVL72 over two racks behind two leaves (3 + 3 trays here, to keep it short),
// its sub-domains the racks' chassis serial numbers, and a CPU node behind a third leaf.
func dualRackTree(t *testing.T) *topology.Tree {
	t.Helper()
	const nvl = "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"
	var nodes []topology.NodeEvidence
	for r, rack := range []string{"1821724000123", "1821724000456"} {
		for i := 1; i <= 3; i++ {
			leaf := fmt.Sprintf("leaf-%d", r+1)
			nodes = append(nodes, topology.NodeEvidence{Node: fmt.Sprintf("gb-r%d-t%02d", r+1, i), Source: "reports",
				NVLinkDomain: nvl, NVLinkSubDomain: rack, Links: []topology.SwitchLink{{SwitchID: leaf, SwitchName: leaf}}})
		}
	}
	nodes = append(nodes, topology.NodeEvidence{Node: "cpu-1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "leaf-3", SwitchName: "leaf-3"}}})
	tree, probs := topology.Build(topology.Input{Nodes: nodes, SwitchLinks: []topology.SwitchEdge{
		{A: "leaf-1", B: "spine-1"}, {A: "leaf-2", B: "spine-1"}, {A: "leaf-3", B: "spine-2"},
		{A: "spine-1", B: "core"}, {A: "spine-2", B: "core"}}}, topology.BuildOptions{AcceleratorDomains: true})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return tree
}

func TestNodeLabelsMultiRackNVLink(t *testing.T) {
	const (
		nvl                = "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"
		sub                = "accelerator.topograph.run/sub-domain"
		dom                = "accelerator.topograph.run/domain"
		leaf, spine, third = "fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2"
	)
	keys := LabelKeys{Accelerator: dom, AcceleratorSubDomain: sub, Tiers: []string{leaf, spine, third}}
	got := NodeLabels(dualRackTree(t), nil, keys)
	want := map[string]map[string]string{
		"cpu-1": {leaf: "leaf-3", spine: "spine-2", third: "fabric"},
	}
	for r, rack := range []string{"1821724000123", "1821724000456"} {
		for i := 1; i <= 3; i++ {
			// The NVLink domain hangs below spine-1, beside the leaves: its nodes have no leaf label.
			want[fmt.Sprintf("gb-r%d-t%02d", r+1, i)] = map[string]string{dom: nvl, sub: rack, spine: "spine-1", third: "fabric"}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{dom, sub, leaf, spine, third}, keys.All()); diff != "" {
		t.Errorf("All (-want +got):\n%s", diff)
	}
}

func TestHyperNodesMultiRackNVLink(t *testing.T) {
	tree := dualRackTree(t)
	for _, sel := range []string{SelectorExact, SelectorLabel} {
		hns, err := HyperNodes(tree, Options{NodeSelector: sel, LabelKeys: DefaultLabelKeys()})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		type shape struct {
			Tier     int
			TierName string
			Members  []string
		}
		got := map[string]shape{}
		for _, hn := range hns {
			s := shape{Tier: hn.Spec.Tier, TierName: hn.Spec.TierName}
			for _, m := range hn.Spec.Members {
				switch {
				case m.Selector.ExactMatch != nil:
					s.Members = append(s.Members, string(m.Type)+":"+m.Selector.ExactMatch.Name)
				case m.Selector.LabelMatch != nil:
					s.Members = append(s.Members, fmt.Sprintf("%s:%v", m.Type, m.Selector.LabelMatch.MatchLabels))
				}
			}
			got[hn.Name] = s
		}
		nvl := "nvl-7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081-1"
		r1, r2 := nvl+"-1821724000123", nvl+"-1821724000456"
		hn, node := string(topologyv1alpha1.MemberTypeHyperNode)+":", string(topologyv1alpha1.MemberTypeNode)+":"
		leaf3 := []string{node + "cpu-1"}
		if sel == SelectorLabel {
			leaf3 = []string{node + "map[" + DefaultTierKeys[0] + ":leaf-3]"}
		}
		want := map[string]shape{
			"fabric":  {5, topology.TierNameRoot, []string{hn + "spine-1", hn + "spine-2"}},
			"spine-1": {4, topology.TierNameSpine, []string{hn + nvl}},
			"spine-2": {4, topology.TierNameSpine, []string{hn + "leaf-3"}},
			"leaf-3":  {3, topology.TierNameLeaf, leaf3},
			nvl:       {2, topology.TierNameAccelerator, []string{hn + r1, hn + r2}},
			// Sub-domains select their nodes by name whatever the selector: a rack's value need not be unique.
			r1: {1, topology.TierNameAcceleratorSubDomain, []string{node + "gb-r1-t01", node + "gb-r1-t02", node + "gb-r1-t03"}},
			r2: {1, topology.TierNameAcceleratorSubDomain, []string{node + "gb-r2-t01", node + "gb-r2-t02", node + "gb-r2-t03"}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: HyperNodes (-want +got):\n%s", sel, diff)
		}
	}
}
