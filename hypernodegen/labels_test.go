package hypernodegen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
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

func TestNodeLabels(t *testing.T) {
	longDomain := strings.Repeat("0123456789abcdef", 5) + ".1"
	tests := []struct {
		name string
		keys LabelKeys
		want map[string]map[string]string
	}{{
		name: "default keys: block, spine, datacenter and the NVLink domain",
		keys: DefaultLabelKeys(),
		want: map[string]map[string]string{
			"a1": {DefaultTierKeys[0]: "la1", DefaultTierKeys[1]: "sa", DefaultTierKeys[2]: "fabric", DefaultAcceleratorKey: "uuid-1.3"},
			"a2": {DefaultTierKeys[0]: "la2", DefaultTierKeys[1]: "sa", DefaultTierKeys[2]: "fabric", DefaultAcceleratorKey: topology.UniqueName(longDomain)},
			"b1": {DefaultTierKeys[0]: "lb1", DefaultTierKeys[1]: "sb", DefaultTierKeys[2]: "fabric"},
			"b2": {DefaultTierKeys[0]: "lb2", DefaultTierKeys[1]: "sb", DefaultTierKeys[2]: "fabric"},
		},
	}, {
		name: "topograph-style keys, fewer than the tiers, no accelerator key",
		keys: LabelKeys{Tiers: []string{"fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2"}},
		want: map[string]map[string]string{
			"a1": {"fabric.topograph.run/tier-1": "la1", "fabric.topograph.run/tier-2": "sa"},
			"a2": {"fabric.topograph.run/tier-1": "la2", "fabric.topograph.run/tier-2": "sa"},
			"b1": {"fabric.topograph.run/tier-1": "lb1", "fabric.topograph.run/tier-2": "sb"},
			"b2": {"fabric.topograph.run/tier-1": "lb2", "fabric.topograph.run/tier-2": "sb"},
		},
	}}
	nvlink := map[string]string{"a1": "uuid-1.3", "a2": longDomain}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeLabels(threeTierTree(t), nvlink, tc.keys)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("labels =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

func TestLabelKeysValidate(t *testing.T) {
	if err := DefaultLabelKeys().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := LabelKeys{Tiers: []string{"ok/key", "not a key"}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not a key") {
		t.Fatalf("err = %v, want one naming the bad key", err)
	}
}
