package hypernodegen

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestKAITopology(t *testing.T) {
	const hostname = "kubernetes.io/hostname"
	levels := func(keys ...string) []any {
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = map[string]any{"nodeLabel": k}
		}
		return out
	}
	tests := []struct {
		name string
		tree func(*testing.T) *topology.Tree
		keys LabelKeys
		want []any
	}{{
		name: "2-tier tree",
		tree: twoTierTree,
		keys: DefaultLabelKeys(),
		want: levels(DefaultTierKeys[1], DefaultTierKeys[0], hostname),
	}, {
		name: "3 switch tiers with accelerator domains",
		tree: acceleratorTree,
		keys: DefaultLabelKeys(),
		want: levels(DefaultTierKeys[2], DefaultTierKeys[1], DefaultTierKeys[0], DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey, hostname),
	}, {
		name: "nvidia-v0 keys, no accelerator key",
		tree: acceleratorTree,
		keys: nvidiaV0Tiers,
		want: levels(wellknown.NVIDIAV0TierKeys[2], wellknown.NVIDIAV0TierKeys[1], wellknown.NVIDIAV0TierKeys[0], hostname),
	}, {
		name: "fewer keys than tiers: the top tier is left out",
		tree: acceleratorTree,
		keys: LabelKeys{Tiers: DefaultTierKeys[:2]},
		want: levels(DefaultTierKeys[1], DefaultTierKeys[0], hostname),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := tc.tree(t)
			got, err := KAITopology("fabric", tc.keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"apiVersion": "kai.scheduler/v1alpha1",
				"kind":       "Topology",
				"metadata": map[string]any{
					"name":   "fabric",
					"labels": map[string]any{wellknown.ManagedByLabel: wellknown.ManagedByValue},
				},
				"spec": map[string]any{"levels": tc.want},
			}
			if diff := cmp.Diff(want, got.Object); diff != "" {
				t.Errorf("KAI Topology (-want +got):\n%s", diff)
			}
			// One tier list for both schedulers: KAI's levels are Kueue's, in the same order.
			kueue, err := KueueTopology("fabric", tc.keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			var kueueLevels []any
			for _, l := range kueue.Spec.Levels {
				kueueLevels = append(kueueLevels, map[string]any{"nodeLabel": l.NodeLabel})
			}
			if diff := cmp.Diff(kueueLevels, tc.want); diff != "" {
				t.Errorf("KAI levels differ from Kueue's (-kueue +kai):\n%s", diff)
			}
		})
	}
}

func TestKAITopologyErrors(t *testing.T) {
	tests := []struct {
		name, topoName string
		tree           func(*testing.T) *topology.Tree
		keys           LabelKeys
		want           string
	}{
		{name: "empty tree", topoName: "fabric", tree: func(*testing.T) *topology.Tree { return topology.NewTree() }, keys: DefaultLabelKeys(), want: "no domains"},
		{name: "bad name", topoName: "Fabric!", tree: twoTierTree, keys: DefaultLabelKeys(), want: `KAI Topology name "Fabric!" is invalid`},
		{name: "hostname as a tier key", topoName: "fabric", tree: twoTierTree, keys: LabelKeys{Tiers: []string{"kubernetes.io/hostname"}}, want: "reserved for the node level"},
		{name: "too many levels", topoName: "fabric", tree: tallTree, keys: tallKeys(), want: "17 levels, KAI accepts at most 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := KAITopology(tc.topoName, tc.keys, tc.tree(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q (object %v)", err, tc.want, topo)
			}
		})
	}
}
