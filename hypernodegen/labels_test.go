package hypernodegen

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func threeTierTree(t *testing.T) *topology.Tree {
	t.Helper()
	link := func(id string) []topology.SwitchLink { return []topology.SwitchLink{{SwitchID: id, SwitchName: id}} }
	tree, probs := topology.Build(topology.Input{
		Nodes: []topology.NodeEvidence{{Node: "a1", Links: link("la1")}, {Node: "a2", Links: link("la2")},
			{Node: "b1", Links: link("lb1")}, {Node: "b2", Links: link("lb2")}, {Node: "x"}},
		SwitchLinks: []topology.SwitchEdge{{A: "la1", B: "sa"}, {A: "la2", B: "sa"}, {A: "lb1", B: "sb"},
			{A: "lb2", B: "sb"}, {A: "sa", B: "core"}, {A: "sb", B: "core"}},
	}, topology.BuildOptions{})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return tree
}

// shallowTree is threeTierTree's shape with one leaf, lc, right under the root beside the spine sa, built
// with or without accelerator domains (every node has an NVLink domain of its own).
func shallowTree(t *testing.T, accelerators bool) *topology.Tree {
	t.Helper()
	gpu := func(node, leaf string) topology.NodeEvidence {
		return topology.NodeEvidence{Node: node, NVLinkDomain: "uuid-" + node + ".1", Links: []topology.SwitchLink{{SwitchID: leaf, SwitchName: leaf}}}
	}
	tree, probs := topology.Build(topology.Input{
		Nodes:       []topology.NodeEvidence{gpu("a1", "la"), gpu("b1", "lb"), gpu("c1", "lc")},
		SwitchLinks: []topology.SwitchEdge{{A: "la", B: "sa"}, {A: "lb", B: "sa"}, {A: "sa", B: "core"}, {A: "lc", B: "core"}},
	}, topology.BuildOptions{AcceleratorDomains: accelerators})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return tree
}

func TestNodeLabels(t *testing.T) {
	longDomain := strings.Repeat("0123456789abcdef", 5) + ".1"
	const (
		tier0, tier1, tier2 = "fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2"
		block, spine, dc    = "network.topology.nvidia.com/block", "network.topology.nvidia.com/spine", "network.topology.nvidia.com/datacenter"
	)
	nvidiaV0, err := StyleKeys(wellknown.LabelStyleNVIDIAV0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		keys LabelKeys
		want map[string]map[string]string
	}{{
		name: "default keys, topograph v1: tier-0 is the leaf, then one key per switch tier; no NVLink label, the tree has no NVLink level",
		keys: DefaultLabelKeys(),
		want: map[string]map[string]string{
			"a1": {tier0: "la1", tier1: "sa", tier2: "fabric"},
			"a2": {tier0: "la2", tier1: "sa", tier2: "fabric"},
			"b1": {tier0: "lb1", tier1: "sb", tier2: "fabric"},
			"b2": {tier0: "lb2", tier1: "sb", tier2: "fabric"},
		},
	}, {
		name: "nvidia-v0 keys: block, spine, datacenter; no accelerator without an NVLink level in the tree",
		keys: nvidiaV0,
		want: map[string]map[string]string{
			"a1": {block: "la1", spine: "sa", dc: "fabric"},
			"a2": {block: "la2", spine: "sa", dc: "fabric"},
			"b1": {block: "lb1", spine: "sb", dc: "fabric"},
			"b2": {block: "lb2", spine: "sb", dc: "fabric"},
		},
	}, {
		name: "custom keys, fewer than the tiers, no accelerator key",
		keys: LabelKeys{Style: wellknown.LabelStyleCustom, Tiers: []string{"example.com/leaf", "example.com/spine"}},
		want: map[string]map[string]string{
			"a1": {"example.com/leaf": "la1", "example.com/spine": "sa"},
			"a2": {"example.com/leaf": "la2", "example.com/spine": "sa"},
			"b1": {"example.com/leaf": "lb1", "example.com/spine": "sb"},
			"b2": {"example.com/leaf": "lb2", "example.com/spine": "sb"},
		},
	}}
	nvlink := map[string]string{"a1": "uuid-1.3", "a2": longDomain}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeLabels(threeTierTree(t), nvlink, tc.keys)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// Keys go by a domain's switch tier, not by its place in the node's path: a leaf right under the root is
// tier-0 and the root above it tier-2, as for the nodes of the deeper branch; tier-1 is left out, with and
// without accelerator domains below the leaves.
func TestNodeLabelsShallowBranch(t *testing.T) {
	const tier0, tier1, tier2 = "fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2"
	for _, accelerators := range []bool{false, true} {
		t.Run(map[bool]string{false: "switch tiers only", true: "with accelerator domains"}[accelerators], func(t *testing.T) {
			want := map[string]map[string]string{
				"a1": {tier0: "la", tier1: "sa", tier2: "fabric"},
				"b1": {tier0: "lb", tier1: "sa", tier2: "fabric"},
				"c1": {tier0: "lc", tier1: "lc", tier2: "fabric"}, // a leaf under the root still gets tier-1: its own name
			}
			if accelerators {
				for n, l := range want {
					l[DefaultAcceleratorKey] = "uuid-" + n + ".1"
					l[DefaultAcceleratorSubDomainKey] = "uuid-" + n + ".1" // the domain is one rack: the sub-domain is the domain
				}
			}
			got := NodeLabels(shallowTree(t, accelerators), nil, DefaultLabelKeys())
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabelKeysValidate(t *testing.T) {
	edited := DefaultLabelKeys()
	edited.Tiers = []string{"example.com/leaf"}
	tests := []struct {
		name string
		keys LabelKeys
		want string // in the error; empty for none
	}{
		{name: "default keys", keys: DefaultLabelKeys()},
		{name: "custom keys without a style", keys: LabelKeys{Tiers: []string{"example.com/leaf"}}},
		{name: "a key that is no label key", keys: LabelKeys{Tiers: []string{"ok/key", "not a key"}}, want: "not a key"},
		{name: "an unknown style", keys: LabelKeys{Style: "topograph-v2"}, want: `--label-style "topograph-v2" is not one of topograph-v1, nvidia-v0, custom`},
		{name: "a named style with keys not its own", keys: edited, want: "are not those of --label-style=topograph-v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.keys.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// nvlinkLong is an NVLink domain too long for a label value.
var nvlinkLong = strings.Repeat("0123456789abcdef", 5) + ".1"

// nvlinkEvidence is threeTierTree's fabric with a third leaf behind sb, and NVLink domains: la1 holds one
// (a1, a2), la2 another (a3), lb1 mixes a node with an NVLink domain (b1) and one without (b2), lb2 holds
// one too long for a label value (b3).
func nvlinkEvidence() topology.Input {
	gpu := func(node, nvl, leaf string) topology.NodeEvidence {
		return topology.NodeEvidence{Node: node, Source: "reports", NVLinkDomain: nvl,
			Links: []topology.SwitchLink{{SwitchID: leaf, SwitchName: leaf}}}
	}
	return topology.Input{
		Nodes: []topology.NodeEvidence{gpu("a1", "uuid-1.1", "la1"), gpu("a2", "uuid-1.1", "la1"),
			gpu("a3", "uuid-1.2", "la2"), gpu("b1", "uuid-2.1", "lb1"), gpu("b2", "", "lb1"), gpu("b3", nvlinkLong, "lb2")},
		SwitchLinks: []topology.SwitchEdge{{A: "la1", B: "sa"}, {A: "la2", B: "sa"}, {A: "lb1", B: "sb"},
			{A: "lb2", B: "sb"}, {A: "sa", B: "core"}, {A: "sb", B: "core"}},
	}
}

// nvlinkTree builds nvlinkEvidence with or without accelerator domains; with them, b2, without an NVLink domain
// beside b1 in lb1 (it stands alone in an accelerator domain named after it), is the one problem expected.
func nvlinkTree(t *testing.T, accelerators bool) *topology.Tree {
	t.Helper()
	tree, probs := topology.Build(nvlinkEvidence(), topology.BuildOptions{AcceleratorDomains: accelerators})
	if want := map[bool]int{false: 0, true: 1}[accelerators]; len(probs) != want {
		t.Fatalf("problems = %v, want %d", probs, want)
	}
	return tree
}

// nvlinkMap is the aggregator's nvlink argument to NodeLabels: the NVLink domain of every node that has one.
func nvlinkMap() map[string]string {
	out := map[string]string{}
	for _, e := range nvlinkEvidence().Nodes {
		if e.NVLinkDomain != "" {
			out[e.Node] = e.NVLinkDomain
		}
	}
	return out
}

func TestNodeLabelsWithAcceleratorDomains(t *testing.T) {
	blk, spn, dc, acc, sub := DefaultTierKeys[0], DefaultTierKeys[1], DefaultTierKeys[2], DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey
	// Without accelerator domains the tree has no NVLink level: no NVLink label either, whatever the evidence.
	switchesOnly := map[string]map[string]string{
		"a1": {blk: "la1", spn: "sa", dc: "fabric"},
		"a2": {blk: "la1", spn: "sa", dc: "fabric"},
		"a3": {blk: "la2", spn: "sa", dc: "fabric"},
		"b1": {blk: "lb1", spn: "sb", dc: "fabric"},
		"b2": {blk: "lb1", spn: "sb", dc: "fabric"},
		"b3": {blk: "lb2", spn: "sb", dc: "fabric"},
	}
	// With them, Kueue has accelerator and sub-domain levels and needs both on every node: a node is its own
	// NVLink domain (b2, named after it), and a domain within one rack is its own sub-domain.
	withNVLinkLevel := map[string]map[string]string{
		"a1": {blk: "la1", spn: "sa", dc: "fabric", acc: "uuid-1.1", sub: "uuid-1.1"},
		"a2": {blk: "la1", spn: "sa", dc: "fabric", acc: "uuid-1.1", sub: "uuid-1.1"},
		"a3": {blk: "la2", spn: "sa", dc: "fabric", acc: "uuid-1.2", sub: "uuid-1.2"},
		"b1": {blk: "lb1", spn: "sb", dc: "fabric", acc: "uuid-2.1", sub: "uuid-2.1"},
		"b2": {blk: "lb1", spn: "sb", dc: "fabric", acc: "b2", sub: "b2"},
		"b3": {blk: "lb2", spn: "sb", dc: "fabric", acc: topology.UniqueName(nvlinkLong), sub: topology.UniqueName(nvlinkLong)},
	}
	tests := []struct {
		name   string
		tree   func(*testing.T) *topology.Tree
		nvlink map[string]string
		keys   LabelKeys
		want   map[string]map[string]string
	}{{
		name: "without accelerator domains: no NVLink label", tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, false) },
		nvlink: nvlinkMap(), keys: DefaultLabelKeys(), want: switchesOnly,
	}, {
		name: "with accelerator domains: the same labels, switch tier N labelled by Tiers[N-2]",
		tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, true) }, nvlink: nvlinkMap(), keys: DefaultLabelKeys(), want: withNVLinkLevel,
	}, {
		name: "with accelerator domains and no nvlink map: the accelerator value comes from the tree",
		tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, true) }, keys: DefaultLabelKeys(), want: withNVLinkLevel,
	}, {
		name: "accelerator domains that record no NVLink domain: their name is the value",
		tree: acceleratorTree, keys: LabelKeys{Accelerator: acc, Tiers: []string{blk, spn}},
		want: map[string]map[string]string{
			"n1": {blk: "leaf-a", spn: "spine-1", acc: "nvl-1"}, "n2": {blk: "leaf-a", spn: "spine-1", acc: "nvl-1"},
			"n3": {blk: "leaf-a", spn: "spine-1", acc: "nvl-2"}, "n4": {blk: "leaf-b", spn: "spine-2", acc: "nvl-3"},
			"n5": {blk: "leaf-b", spn: "spine-2", acc: "nvl-3"}, "n6": {blk: "leaf-c", spn: "spine-2", acc: "n6"},
		},
	}, {
		name: "accelerator domains not below every switch domain: no labels at all",
		tree: func(t *testing.T) *topology.Tree {
			return buildTree(t,
				dom{name: "leaf", tier: 2, tierName: topology.TierNameLeaf},
				dom{name: "nvl", tier: 1, tierName: topology.TierNameAccelerator, parent: "leaf", nodes: []string{"n1"}},
				dom{name: "low-leaf", tier: 1, tierName: topology.TierNameLeaf, parent: "leaf", nodes: []string{"n2"}},
			)
		},
		nvlink: map[string]string{"n1": "c.1"}, keys: DefaultLabelKeys(), want: map[string]map[string]string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NodeLabels(tc.tree(t), tc.nvlink, tc.keys)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
