package peers

import (
	"slices"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
)

// seedFabric is the 12-node fabric of the Koordinator seed (one GPU a node, whole-node pods): Unit0 and Unit1
// (2 nodes each) in Leaf0, Unit2 and Unit3 (4 nodes each) in Leaf1, one spine; busy nodes are used.
func seedFabric(t *testing.T, busy ...string) *placement.Cluster {
	t.Helper()
	tr := topology.NewTree()
	add := func(name string, tier int, parent string, children, nodes []string) {
		if err := tr.Add(&topology.Domain{Name: name, Tier: tier, Parent: parent, Children: children, Nodes: nodes}); err != nil {
			t.Fatal(err)
		}
	}
	add("spine", 3, "", []string{"leaf0", "leaf1"}, nil)
	add("leaf0", 2, "spine", []string{"unit0", "unit1"}, nil)
	add("leaf1", 2, "spine", []string{"unit2", "unit3"}, nil)
	add("unit0", 1, "leaf0", nil, []string{"node00", "node01"})
	add("unit1", 1, "leaf0", nil, []string{"node02", "node03"})
	add("unit2", 1, "leaf1", nil, []string{"node04", "node05", "node06", "node07"})
	add("unit3", 1, "leaf1", nil, []string{"node08", "node09", "node10", "node11"})
	f, err := placement.NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []placement.Node
	for _, n := range f.Nodes() {
		used := int64(0)
		if slices.Contains(busy, n) {
			used = 1
		}
		nodes = append(nodes, placement.Node{Name: n, Allocatable: placement.Resources{"nvidia.com/gpu": 1}, Used: placement.Resources{"nvidia.com/gpu": used}})
	}
	c, _, err := placement.NewCluster(f, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPeersBehaveAsPublished pins each peer's documented choice on the seed fabric.
func TestPeersBehaveAsPublished(t *testing.T) {
	gang := func(m, pp int) placement.Gang {
		return placement.Gang{Name: "g", Pods: m, PP: pp, Request: placement.Resources{"nvidia.com/gpu": 1}}
	}
	cases := []struct {
		name   string
		placer interface {
			Place(*placement.Cluster, placement.Gang) ([]string, error)
		}
		busy []string
		gang placement.Gang
		want []string
	}{
		// The seed: PodGroup1 (4 pods) goes to Unit2, the first s1 domain (smallest first) that holds it.
		{"koordinator step 1", koordinator{}, nil, gang(4, 2), []string{"node04", "node05", "node06", "node07"}},
		// Step 2 packs PP groups into s1 domains smallest first, even across leaves.
		{"koordinator step 2", koordinator{}, []string{"node04", "node05", "node06", "node08", "node09", "node10"}, gang(4, 2), []string{"node00", "node01", "node02", "node03"}},
		// First-fit fills nodes in name order.
		{"first-fit", firstFit{}, []string{"node00"}, gang(3, 0), []string{"node01", "node02", "node03"}},
		// Kueue: the fitting unit with the least free capacity (Unit0, 2 nodes) for 2 pods.
		{"kueue best fit", kueue{}, nil, gang(2, 0), []string{"node00", "node01"}},
		// Kueue descends through the leaf: 5 pods need Leaf1, Unit2 (4) whole and then the best fit of the rest.
		{"kueue descend", kueue{}, nil, gang(5, 0), []string{"node04", "node05", "node06", "node07", "node08"}},
		// Slurm: the best-fit lowest switch, then leaves smallest-that-fits.
		{"slurm", slurm{}, []string{"node04"}, gang(3, 0), []string{"node05", "node06", "node07"}},
		// Volcano: the lowest tier that fits; among units the most utilised after placement (Unit2, one busy).
		{"volcano", volcano{}, []string{"node04"}, gang(3, 0), []string{"node05", "node06", "node07"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := seedFabric(t, tc.busy...)
			got, err := tc.placer.Place(c, tc.gang)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
