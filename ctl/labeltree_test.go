package ctl

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestTreeFromNodeLabelsNamesTiersAsTheHyperNodes: the tree read back from the labels the aggregator writes
// names every domain's tier as the HyperNodes written from the same tree do (spec.tierName: the root
// "fabric"), unless the keys end below the root, where the top labelled tier keeps its switch-tier name.
func TestTreeFromNodeLabelsNamesTiersAsTheHyperNodes(t *testing.T) {
	link := func(node, sw string) topology.NodeEvidence {
		return topology.NodeEvidence{Node: node, Source: "reports", Links: []topology.SwitchLink{{SwitchID: sw}}}
	}
	twoTiers := topology.Input{
		Nodes:       []topology.NodeEvidence{link("a1", "la"), link("b1", "lb")},
		SwitchLinks: []topology.SwitchEdge{{A: "la", B: "spine"}, {A: "lb", B: "spine"}},
	}
	threeTiers := topology.Input{
		Nodes: []topology.NodeEvidence{link("a1", "la"), link("b1", "lb"), link("c1", "lc"), link("d1", "ld")},
		SwitchLinks: []topology.SwitchEdge{{A: "la", B: "s1"}, {A: "lb", B: "s1"}, {A: "lc", B: "s2"}, {A: "ld", B: "s2"},
			{A: "s1", B: "core"}, {A: "s2", B: "core"}},
	}
	custom := func(keys ...string) hypernodegen.LabelKeys {
		return hypernodegen.LabelKeys{Style: wellknown.LabelStyleCustom, Tiers: keys}
	}
	for _, tc := range []struct {
		name string
		in   topology.Input
		keys hypernodegen.LabelKeys
		// want is each domain's tier name read from the labels; nil: those of the built tree (its HyperNodes').
		want map[string]string
	}{
		{name: "leaf and root, the default keys", in: twoTiers, keys: hypernodegen.DefaultLabelKeys()},
		{name: "leaf, spine and root, the default keys", in: threeTiers, keys: hypernodegen.DefaultLabelKeys()},
		{name: "leaf, spine and root, keys up to the root's tier", in: threeTiers, keys: custom("example.com/leaf", "example.com/spine", "example.com/root")},
		{name: "leaf, spine and root, keys ending at the spines", in: threeTiers, keys: custom("example.com/leaf", "example.com/spine"),
			want: map[string]string{"la": topology.TierNameLeaf, "lb": topology.TierNameLeaf, "lc": topology.TierNameLeaf, "ld": topology.TierNameLeaf,
				"s1": topology.TierNameSpine, "s2": topology.TierNameSpine}},
		{name: "leaf and root, one key", in: twoTiers, keys: custom("example.com/leaf"),
			want: map[string]string{"la": topology.TierNameLeaf, "lb": topology.TierNameLeaf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built, probs := topology.Build(tc.in, topology.BuildOptions{})
			if len(probs) > 0 {
				t.Fatal(probs)
			}
			want := tc.want
			if want == nil {
				hns, err := hypernodegen.HyperNodes(built, hypernodegen.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want = map[string]string{}
				for _, hn := range hns {
					want[hn.Name] = hn.Spec.TierName
				}
			}
			read := treeFromNodeLabels(io.Discard, hypernodegen.NodeLabels(built, nil, tc.keys), tc.keys, "the tree below is")
			if read == nil {
				t.Fatal("no tree read from the labels")
			}
			got := map[string]string{}
			for name, d := range read.Domains {
				got[name] = d.TierName
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tier names read from the labels (-want +got):\n%s", diff)
			}
		})
	}
}
