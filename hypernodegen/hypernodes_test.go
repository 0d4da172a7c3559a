package hypernodegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func sampleTree(t *testing.T) *topology.Tree {
	t.Helper()
	tree, probs := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}}},
		{Node: "n2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}}},
		{Node: "n3", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "mac:2", SwitchName: "leaf-b"}}},
	}}, topology.BuildOptions{})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return tree
}

func TestHyperNodes(t *testing.T) {
	hns, err := HyperNodes(sampleTree(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Name      string
		Tier      int
		TierName  string
		Members   []string
		NodeCount int64
		Owned     bool
	}
	var got []summary
	for _, hn := range hns {
		s := summary{Name: hn.Name, Tier: hn.Spec.Tier, TierName: hn.Spec.TierName, NodeCount: hn.Status.NodeCount,
			Owned: hn.Labels[wellknown.ManagedByLabel] == wellknown.ManagedByValue}
		for _, m := range hn.Spec.Members {
			s.Members = append(s.Members, string(m.Type)+"/"+m.Selector.ExactMatch.Name)
		}
		got = append(got, s)
	}
	want := []summary{
		{"fabric", 2, "fabric", []string{"HyperNode/leaf-a", "HyperNode/leaf-b"}, 3, true},
		{"leaf-a", 1, "leaf", []string{"Node/n1", "Node/n2"}, 2, true},
		{"leaf-b", 1, "leaf", []string{"Node/n3"}, 1, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("HyperNodes (-want +got):\n%s", diff)
	}
	if hns[1].APIVersion != "topology.volcano.sh/v1alpha1" || hns[1].Kind != "HyperNode" {
		t.Errorf("type meta = %v", hns[1].TypeMeta)
	}
}

func TestHyperNodesRefusesInvalidTree(t *testing.T) {
	tree := sampleTree(t)
	tree.Domains["leaf-a"].Parent = "missing"
	if _, err := HyperNodes(tree, Options{}); err == nil || !strings.Contains(err.Error(), "invalid tree") {
		t.Fatalf("err = %v, want a refusal", err)
	}
}

// TestHyperNodesWithAcceleratorDomains: accelerator domains are tier-1 HyperNodes of node members (b2, without
// an NVLink domain beside b1, stands alone in one named after it), leaves above them tier-2 HyperNodes of
// HyperNode members, and the HyperNodes read back into the same tree (treeread.TestHyperNodesRoundTrip).
func TestHyperNodesWithAcceleratorDomains(t *testing.T) {
	tree := nvlinkTree(t, true)
	hns, err := HyperNodes(tree, Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := topology.SafeName("nvl-" + nvlinkLong)
	want := map[string]string{
		"fabric":       "4 fabric: HyperNode/sa HyperNode/sb",
		"sa":           "3 spine: HyperNode/la1 HyperNode/la2",
		"sb":           "3 spine: HyperNode/lb1 HyperNode/lb2",
		"la1":          "2 leaf: HyperNode/nvl-uuid-1-1",
		"la2":          "2 leaf: HyperNode/nvl-uuid-1-2",
		"lb1":          "2 leaf: HyperNode/b2 HyperNode/nvl-uuid-2-1",
		"lb2":          "2 leaf: HyperNode/" + long,
		"b2":           "1 accelerator: Node/b2",
		"nvl-uuid-1-1": "1 accelerator: Node/a1 Node/a2",
		"nvl-uuid-1-2": "1 accelerator: Node/a3",
		"nvl-uuid-2-1": "1 accelerator: Node/b1",
		long:           "1 accelerator: Node/b3",
	}
	got := map[string]string{}
	for _, hn := range hns {
		s := fmt.Sprintf("%d %s:", hn.Spec.Tier, hn.Spec.TierName)
		for _, m := range hn.Spec.Members {
			s += " " + string(m.Type) + "/" + m.Selector.ExactMatch.Name
		}
		got[hn.Name] = s
		if hn.Labels[wellknown.TierNameLabel] != hn.Spec.TierName {
			t.Errorf("HyperNode %s: tier-name label %q, want %q", hn.Name, hn.Labels[wellknown.TierNameLabel], hn.Spec.TierName)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HyperNodes (-want +got):\n%s", diff)
	}
}

// TestHyperNodeAnnotations: a domain's switches and its degraded uplinks become annotations; a domain with no
// degraded uplink has no degraded-uplinks annotation, and one with neither has no annotations at all.
func TestHyperNodeAnnotations(t *testing.T) {
	tree := sampleTree(t)
	tree.Domains["leaf-a"].DegradedUplinks = 2
	tree.Domains["fabric"].Switches = nil
	hns, err := HyperNodes(tree, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, hn := range hns {
		got[hn.Name] = hn.Annotations
	}
	want := map[string]map[string]string{
		"fabric": nil,
		"leaf-a": {wellknown.SwitchesAnnotation: "mac:1", wellknown.DegradedUplinksAnnotation: "2"},
		"leaf-b": {wellknown.SwitchesAnnotation: "mac:2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}
