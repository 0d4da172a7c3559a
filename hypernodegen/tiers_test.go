package hypernodegen

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

func TestTiers(t *testing.T) {
	plain, _ := topology.Build(topology.Input{
		Nodes: []topology.NodeEvidence{
			{Node: "a1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "la"}}},
			{Node: "b1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "lb"}}},
		},
		SwitchLinks: []topology.SwitchEdge{{A: "la", B: "spine"}, {A: "lb", B: "spine"}},
	}, topology.BuildOptions{})
	k := DefaultLabelKeys()
	tests := []struct {
		name        string
		tree        *topology.Tree
		want        []Tier
		wantRecipes []TierRecipe
	}{{
		name: "a fat tree: leaf tier 1 is tier-0 and Kueue's second level",
		tree: plain,
		want: []Tier{
			{Tier: 2, Name: topology.TierNameRoot, Domains: 1, LabelKey: k.Tiers[1], KueueLevel: 1},
			{Tier: 1, Name: topology.TierNameLeaf, Domains: 2, LabelKey: k.Tiers[0], KueueLevel: 2},
		},
		wantRecipes: []TierRecipe{{Goal: "one leaf", Tier: 1, Volcano: "mode: hard, highestTierAllowed: 1",
			Kueue: KueueRequiredTopologyAnnotation + ": " + k.Tiers[0], PodGroup: podGroupOn(k.Tiers[0])}},
	}, {
		name: "an NVLink domain over six leaves with racks: leaf tier 3, NVLink parts noted",
		tree: spanTree(t),
		want: []Tier{
			{Tier: 5, Name: topology.TierNameRoot, Domains: 1, LabelKey: k.Tiers[2], KueueLevel: 1},
			{Tier: 4, Name: topology.TierNameSpine, Domains: 3, LabelKey: k.Tiers[1], KueueLevel: 2},
			{Tier: 3, Name: topology.TierNameLeaf, Domains: 7, LabelKey: k.Tiers[0], KueueLevel: 3},
			{Tier: 2, Name: topology.TierNameAccelerator, Domains: 6, LabelKey: k.Accelerator, KueueLevel: 4, NVLinkParts: 6},
			{Tier: 1, Name: topology.TierNameAcceleratorSubDomain, Domains: 6, LabelKey: k.AcceleratorSubDomain, KueueLevel: 5},
		},
		wantRecipes: []TierRecipe{
			{Goal: "one NVLink sub-domain (rack)", Tier: 1, Volcano: "mode: hard, highestTierAllowed: 1", Kueue: KueueRequiredTopologyAnnotation + ": " + k.AcceleratorSubDomain, PodGroup: podGroupOn(k.AcceleratorSubDomain)},
			{Goal: "one NVLink domain", Tier: 2, Volcano: "mode: hard, highestTierAllowed: 2", Kueue: KueueRequiredTopologyAnnotation + ": " + k.Accelerator, PodGroup: podGroupOn(k.Accelerator),
				Note: "6 accelerator domains are parts of NVLink domains that span leaves: a job stays in the part behind one leaf"},
			{Goal: "one leaf", Tier: 3, Volcano: "mode: hard, highestTierAllowed: 3", Kueue: KueueRequiredTopologyAnnotation + ": " + k.Tiers[0], PodGroup: podGroupOn(k.Tiers[0])},
			{Goal: "one spine", Tier: 4, Volcano: "mode: hard, highestTierAllowed: 4", Kueue: KueueRequiredTopologyAnnotation + ": " + k.Tiers[1], PodGroup: podGroupOn(k.Tiers[1])},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tiers(tc.tree, k)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRecipes, TierRecipes(got)); diff != "" {
				t.Errorf("recipes (-want +got):\n%s", diff)
			}
		})
	}
}

// podGroupOn is the PodGroup spec.schedulingConstraints that keeps a gang in one domain of the label key.
func podGroupOn(key string) *PodGroupSchedulingConstraints {
	return &PodGroupSchedulingConstraints{Topology: []PodGroupTopologyConstraint{{Key: key}}}
}

// TestPodGroupSchedulingConstraintsString: the one-line form get tiers prints is the YAML of the API's fields.
func TestPodGroupSchedulingConstraintsString(t *testing.T) {
	got := podGroupOn("example.com/leaf").String()
	if want := "{topology: [{key: example.com/leaf}]}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
