package hypernodegen

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
	"github.com/fabricmap/fabricmap/wellknown"
)

// spanTree is topologytest.SpanInput built with accelerator domains: one NVLink domain over six leaves
// under three spines, racks as sub-domains, and a CPU leaf directly under the core.
func spanTree(t *testing.T) *topology.Tree {
	t.Helper()
	tree, probs := topology.Build(topologytest.SpanInput(), topology.BuildOptions{AcceleratorDomains: true})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return tree
}

// spanPart is the accelerator domain of topologytest.SpanNVLinkDomain's part behind leaf.
func spanPart(leaf string) string {
	return topology.SafeName("nvl-" + topologytest.SpanNVLinkDomain + "." + leaf)
}

// TestNodeLabelsMultiRackNVLink: every node keeps every switch tier whatever its NVLink domain, beside the
// NVLink domain and sub-domain; the CPU nodes, whose leaf hangs under the root, get a tier-1 value and, since
// the tree has NVLink levels, their own name as NVLink domain and sub-domain.
func TestNodeLabelsMultiRackNVLink(t *testing.T) {
	tier0, tier1, tier2 := DefaultTierKeys[0], DefaultTierKeys[1], DefaultTierKeys[2]
	dom, sub := DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey
	want := map[string]map[string]string{}
	for r := 1; r <= 6; r++ {
		for i := 1; i <= 8; i++ {
			want[fmt.Sprintf("gb-r%d-t%d", r, i)] = map[string]string{
				tier0: fmt.Sprintf("leaf-%d", r), tier1: fmt.Sprintf("spine-%d", (r+1)/2), tier2: "fabric",
				dom: topologytest.SpanNVLinkDomain, sub: fmt.Sprintf("rack-%d", r),
			}
		}
	}
	for i := 1; i <= 4; i++ {
		n := fmt.Sprintf("cpu-%d", i)
		want[n] = map[string]string{tier0: "leaf-cpu", tier1: "leaf-cpu", tier2: "fabric", dom: n, sub: n}
	}
	got := NodeLabels(spanTree(t), nil, DefaultLabelKeys())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

// TestKueueLevelsMultiRackNVLink: the Kueue levels are every switch tier, then the NVLink domain and
// sub-domain, then the host; every node carries every level's label (Kueue leaves out nodes that miss one).
func TestKueueLevelsMultiRackNVLink(t *testing.T) {
	tree := spanTree(t)
	topo, err := KueueTopology("default", DefaultLabelKeys(), tree)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range topo.Spec.Levels {
		got = append(got, l.NodeLabel)
	}
	want := []string{DefaultTierKeys[2], DefaultTierKeys[1], DefaultTierKeys[0], DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey, corev1.LabelHostname}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("levels (-want +got):\n%s", diff)
	}
	for node, labels := range NodeLabels(tree, nil, DefaultLabelKeys()) {
		for _, key := range want[:len(want)-1] {
			if labels[key] == "" {
				t.Errorf("node %s has no %s label: Kueue would leave it out", node, key)
			}
		}
	}
}

// TestHyperNodesMultiRackNVLink: the leaf and spine HyperNodes stay for every node; the NVLink domain is one
// accelerator HyperNode per leaf it spans, labelled and annotated with the whole domain, and selecting its
// nodes by name even with the label selector (its label value is shared by the other parts' nodes).
func TestHyperNodesMultiRackNVLink(t *testing.T) {
	tree := spanTree(t)
	type shape struct {
		Tier     int
		TierName string
		Members  []string
		NVLink   string
	}
	hn, node := string(topologyv1alpha1.MemberTypeHyperNode)+":", string(topologyv1alpha1.MemberTypeNode)+":"
	for _, sel := range []string{SelectorExact, SelectorLabel} {
		hns, err := HyperNodes(tree, Options{NodeSelector: sel, LabelKeys: DefaultLabelKeys()})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		got := map[string]shape{}
		for _, h := range hns {
			s := shape{Tier: h.Spec.Tier, TierName: h.Spec.TierName, NVLink: h.Labels[wellknown.NVLinkDomainLabel]}
			if a := h.Annotations[wellknown.NVLinkDomainAnnotation]; a != "" && a != topologytest.SpanNVLinkDomain {
				t.Errorf("%s: annotation %s = %q", h.Name, wellknown.NVLinkDomainAnnotation, a)
			}
			for _, m := range h.Spec.Members {
				switch {
				case m.Selector.ExactMatch != nil:
					s.Members = append(s.Members, string(m.Type)+":"+m.Selector.ExactMatch.Name)
				case m.Selector.LabelMatch != nil:
					s.Members = append(s.Members, fmt.Sprintf("%s:%v", m.Type, m.Selector.LabelMatch.MatchLabels))
				}
			}
			got[h.Name] = s
		}
		cpus := []string{node + "cpu-1", node + "cpu-2", node + "cpu-3", node + "cpu-4"}
		if sel == SelectorLabel {
			cpus = []string{node + "map[" + DefaultTierKeys[0] + ":leaf-cpu]"}
		}
		want := map[string]shape{
			"fabric":   {5, topology.TierNameRoot, []string{hn + "leaf-cpu", hn + "spine-1", hn + "spine-2", hn + "spine-3"}, ""},
			"leaf-cpu": {3, topology.TierNameLeaf, cpus, ""},
		}
		for s := 1; s <= 3; s++ {
			want[fmt.Sprintf("spine-%d", s)] = shape{4, topology.TierNameSpine, []string{hn + fmt.Sprintf("leaf-%d", 2*s-1), hn + fmt.Sprintf("leaf-%d", 2*s)}, ""}
		}
		for r := 1; r <= 6; r++ {
			leaf, rack := fmt.Sprintf("leaf-%d", r), topology.SafeName("nvl-"+topologytest.SpanNVLinkDomain+".rack-"+fmt.Sprint(r))
			want[leaf] = shape{3, topology.TierNameLeaf, []string{hn + spanPart(leaf)}, ""}
			want[spanPart(leaf)] = shape{2, topology.TierNameAccelerator, []string{hn + rack}, topologytest.SpanNVLinkDomain}
			var trays []string
			for i := 1; i <= 8; i++ {
				trays = append(trays, node+fmt.Sprintf("gb-r%d-t%d", r, i))
			}
			want[rack] = shape{1, topology.TierNameAcceleratorSubDomain, trays, topologytest.SpanNVLinkDomain}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: HyperNodes (-want +got):\n%s", sel, diff)
		}
	}
}

// TestHyperNodesWholeNVLinkDomainSelectsByLabel: an NVLink domain behind one leaf is one accelerator
// HyperNode, and the label selector selects its nodes by the NVLink-domain label.
func TestHyperNodesWholeNVLinkDomainSelectsByLabel(t *testing.T) {
	in := topology.Input{}
	for i := 1; i <= 3; i++ {
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("n%d", i), Source: "reports", NVLinkDomain: "u.1",
			Links: []topology.SwitchLink{{SwitchID: "leaf"}}})
	}
	tree, _ := topology.Build(in, topology.BuildOptions{AcceleratorDomains: true})
	hns, err := HyperNodes(tree, Options{NodeSelector: SelectorLabel, LabelKeys: DefaultLabelKeys()})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hns {
		if h.Spec.TierName != topology.TierNameAccelerator {
			continue
		}
		if len(h.Spec.Members) != 1 || h.Spec.Members[0].Selector.LabelMatch == nil ||
			h.Spec.Members[0].Selector.LabelMatch.MatchLabels[DefaultAcceleratorKey] != "u.1" {
			t.Errorf("accelerator HyperNode %s members %+v, want one label member %s=u.1", h.Name, h.Spec.Members, DefaultAcceleratorKey)
		}
		return
	}
	t.Fatal("no accelerator HyperNode")
}
