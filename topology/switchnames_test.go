package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reported returns a node's own report: the node is cabled to switch id, which it calls name.
func reported(node, id, name string) NodeEvidence {
	return NodeEvidence{Node: node, Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: id, SwitchName: name}}}
}

// captured returns what a fabric-wide source says of a node: cabled to switch id, called name.
func captured(node, id, name string) NodeEvidence {
	return NodeEvidence{Node: node, Source: "ibnetdiscover", Links: []SwitchLink{{SwitchID: id, SwitchName: name}}}
}

func TestBuildSwitchNames(t *testing.T) {
	// rackA is three nodes whose reports agree on their leaf's name.
	rackA := []NodeEvidence{reported("a1", "mac:1", "leaf-a"), reported("a2", "mac:1", "leaf-a"), reported("a3", "mac:1", "leaf-a")}
	withA := func(more ...NodeEvidence) []NodeEvidence { return append(append([]NodeEvidence{}, rackA...), more...) }
	merged := func(reports, capture Input) Input { in, _ := Merge(reports, capture); return in }
	tests := []struct {
		name      string
		in        Input
		opts      BuildOptions
		want      []string
		wantProbs []string
	}{{
		name: "reports that agree name their leaf",
		in:   Input{Nodes: withA()},
		want: []string{"fabric(2)leaf-a", "leaf-a(1)a1,a2,a3"},
	}, {
		name: "a name from a minority of the reports of a switch is ignored and reported",
		in:   Input{Nodes: withA(reported("a4", "mac:1", "aaa-spoofed"))},
		want: []string{"fabric(2)leaf-a", "leaf-a(1)a1,a2,a3,a4"},
		wantProbs: []string{`node "a4" (source reports): switch "mac:1": name "aaa-spoofed", given by the reports of a4 (1 of the 4 that reach the switch), is not used: ` +
			`the switch is named "leaf-a" by the reports of a1, a2, a3 (3 of the 4 that reach the switch)`},
	}, {
		name: "without a majority for any name the switch is named after its identifier",
		in:   Input{Nodes: []NodeEvidence{reported("a1", "mac:1", "leaf-a"), reported("a2", "mac:1", "leaf-b")}},
		want: []string{"fabric(2)mac-1", "mac-1(1)a1,a2"},
		wantProbs: []string{
			`node "a1" (source reports): switch "mac:1": name "leaf-a", given by the reports of a1 (1 of the 2 that reach the switch), is not used: no name has the support of most of the reports that reach the switch, which a name from reports needs; it is named after its identifier`,
			`node "a2" (source reports): switch "mac:1": name "leaf-b", given by the reports of a2 (1 of the 2 that reach the switch), is not used: no name has the support of most of the reports that reach the switch, which a name from reports needs; it is named after its identifier`,
		},
	}, {
		name:      "a report claiming the root's name is ignored and reported",
		in:        Input{Nodes: withA(reported("b1", "mac:2", "Fabric"))},
		want:      []string{"fabric(2)leaf-a,mac-2", "leaf-a(1)a1,a2,a3", "mac-2(1)b1"},
		wantProbs: []string{`node "b1" (source reports): switch "mac:2": name "Fabric", given by the reports of b1 (1 of the 1 that reach the switch), is not used: it is the root's name, which no switch may take`},
	}, {
		name:      "the configured root name is reserved too, even for a fabric-wide source",
		in:        Input{Nodes: []NodeEvidence{captured("a1", "guid:1", "leaf-a"), captured("b1", "guid:2", "pod 7")}},
		opts:      BuildOptions{RootName: "pod-7"},
		want:      []string{"guid-2(1)b1", "leaf-a(1)a1", "pod-7(2)guid-2,leaf-a"},
		wantProbs: []string{`source ibnetdiscover: switch "guid:2": name "pod 7", given by source ibnetdiscover, is not used: it is the root's name, which no switch may take`},
	}, {
		name: "a report whose link is rejected as a stray names nothing",
		in: Input{Nodes: []NodeEvidence{
			{Node: "a1", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:2", SwitchName: "aaa"}}},
			{Node: "a2", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:3", SwitchName: "leaf-a2"}}},
			{Node: "a3", Source: "reports", SelfReported: true, Links: []SwitchLink{{SwitchID: "mac:1", SwitchName: "leaf-a"}, {SwitchID: "mac:3", SwitchName: "leaf-a2"}}},
			reported("b1", "mac:2", "leaf-b"), reported("b2", "mac:2", "leaf-b"),
		}},
		want:      []string{"fabric(2)leaf-a-rails,leaf-b", "leaf-a-rails(1)a1,a2,a3", "leaf-b(1)b1,b2"},
		wantProbs: []string{`node "a1" (source reports): cabled to switches of different domains: kept with leaf-a (mac:1) (most of its links), not with leaf-b (mac:2), whose hosts it hardly shares; check those cables`},
	}, {
		name: "a node claiming another leaf's NVLink domain stays in its leaf, and its switch name counts as any report's",
		in: Input{Nodes: []NodeEvidence{
			withNVLink(reported("a1", "mac:1", "leaf-a"), "ra"), withNVLink(reported("a2", "mac:1", "leaf-a"), "ra"), withNVLink(reported("a3", "mac:1", "leaf-a"), "ra"),
			withNVLink(reported("b1", "mac:2", "leaf-b"), "rb"), withNVLink(reported("b3", "mac:2", "leaf-b"), "rb"), withNVLink(reported("b2", "mac:2", "aaa"), "ra"),
		}},
		opts: BuildOptions{AcceleratorDomains: true},
		want: []string{"fabric(3)leaf-a,leaf-b", "leaf-a(2)nvl-ra", "leaf-b(2)nvl-ra-leaf-b,nvl-rb", "nvl-ra(1)a1,a2,a3", "nvl-ra-leaf-b(1)b2", "nvl-rb(1)b1,b3"},
		wantProbs: []string{
			`node "b2" (source reports): switch "mac:2": name "aaa", given by the reports of b2 (1 of the 3 that reach the switch), is not used: the switch is named "leaf-b" by the reports of b1, b3 (2 of the 3 that reach the switch)`,
			`node "b2" (source reports): claims NVLink domain "ra", but 3 of the 4 nodes that claim it sit in leaf domain "leaf-a" (a1, a2, a3) and this node does not; ` +
				`the claim places this node only: it stands in accelerator domain "nvl-ra-leaf-b", a part of that domain below its own leaf domain "leaf-b", and the nodes of "leaf-a" keep their accelerator domain`},
	}, {
		name: "a capture's switch link name beats the reports' name",
		in:   Input{Nodes: withA(), SwitchLinks: []SwitchEdge{{A: "mac:1", B: "mac:9", AName: "sw-leaf-1", BName: "spine", Source: "ibnetdiscover"}}},
		want: []string{"fabric(2)sw-leaf-1", "sw-leaf-1(1)a1,a2,a3"},
		wantProbs: []string{`node "a1" (source reports): switch "mac:1": name "leaf-a", given by the reports of a1, a2, a3 (3 of the 3 that reach the switch), is not used: ` +
			`the switch is named "sw-leaf-1" by source ibnetdiscover, and fabric-wide sources outrank node reports`},
	}, {
		name: "a capture's name for the nodes it places beats the reports' name after Merge",
		in: merged(Input{Nodes: withA()}, Input{Nodes: []NodeEvidence{
			captured("a1", "mac:1", "sw-leaf-1"), captured("a2", "mac:1", "sw-leaf-1"), captured("a3", "mac:1", "sw-leaf-1"),
		}}),
		want: []string{"fabric(2)sw-leaf-1", "sw-leaf-1(1)a1,a2,a3"},
		wantProbs: []string{`node "a1" (source reports): switch "mac:1": name "leaf-a", given by the reports of a1, a2, a3 (3 of the 3 that reach the switch), is not used: ` +
			`the switch is named "sw-leaf-1" by source ibnetdiscover, and fabric-wide sources outrank node reports`},
	}, {
		name: "a report cannot take a spine's name: the switch a fabric-wide source names keeps it",
		in: Input{
			Nodes: withA(reported("b1", "mac:2", "spine-1"), reported("b2", "mac:2", "spine-1"), reported("c1", "mac:3", "leaf-c")),
			SwitchLinks: []SwitchEdge{
				{A: "mac:1", B: "mac:9", BName: "spine-1", Source: "ufm"},
				{A: "mac:2", B: "mac:9", BName: "spine-1", Source: "ufm"},
				{A: "mac:3", B: "mac:8", BName: "spine-2", Source: "ufm"},
				{A: "mac:9", B: "mac:7", BName: "core", Source: "ufm"},
				{A: "mac:8", B: "mac:7", BName: "core", Source: "ufm"},
			},
		},
		want: []string{"fabric(3)spine-1,spine-2", "leaf-a(1)a1,a2,a3", "leaf-c(1)c1", "mac-2(1)b1,b2", "spine-1(2)leaf-a,mac-2", "spine-2(2)leaf-c"},
		wantProbs: []string{`node "b1" (source reports): switch "mac:2": name "spine-1", given by the reports of b1, b2 (2 of the 2 that reach the switch), is not used: ` +
			`switch "mac:9" has the same name, given by source ufm, which ranks higher (fabric-wide sources over reports, then more of them, then the smaller identifier); the switch is named after its identifier`},
	}, {
		name: "two fabric-wide names for one switch: the one more sources give wins, and the other is reported",
		in: Input{
			Nodes:       []NodeEvidence{captured("a1", "guid:1", "zz-leaf"), {Node: "a2", Source: "ufm", Links: []SwitchLink{{SwitchID: "guid:1", SwitchName: "aa-leaf"}}}},
			SwitchLinks: []SwitchEdge{{A: "guid:1", B: "guid:9", AName: "zz-leaf", Source: "labels"}},
		},
		want: []string{"fabric(2)zz-leaf", "zz-leaf(1)a1,a2"},
		wantProbs: []string{`source ufm: switch "guid:1": name "aa-leaf", given by source ufm, is not used: ` +
			`the switch is named "zz-leaf" by sources ibnetdiscover, labels, and the name the most fabric-wide sources give wins (the smaller on a tie)`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := Build(tc.in, tc.opts)
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			got := make([]string, len(probs))
			for i, p := range probs {
				got[i] = p.String()
			}
			if diff := cmp.Diff(tc.wantProbs, got, cmpEmptyNil); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmptyNil makes a nil slice equal an empty one.
var cmpEmptyNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// withNVLink returns e with NVLink domain nvl.
func withNVLink(e NodeEvidence, nvl string) NodeEvidence {
	e.NVLinkDomain = nvl
	return e
}
