package placement

import (
	"slices"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
)

// mkTree builds a tree from lines "name/tier[/tierName]: member member …" (topologytest.Tree).
func mkTree(t testing.TB, lines ...string) *topology.Tree { return topologytest.Tree(t, lines...) }

// mkCluster builds a cluster whose nodes each have gpus GPUs, with used[node] of them in use.
func mkCluster(t testing.TB, tr *topology.Tree, gpus int64, used map[string]int64, running ...Running) *Cluster {
	t.Helper()
	f, err := NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []Node
	for _, n := range f.Nodes() {
		nodes = append(nodes, Node{Name: n, Allocatable: Resources{gpu: gpus}, Used: Resources{gpu: used[n]}})
	}
	c, _, err := NewCluster(f, nodes, running)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const gpu = "nvidia.com/gpu"

// seedTree is the 3-tier fabric of the Koordinator seed's strategy table: units (tier 1) in leaves (tier 2)
// under one spine (tier 3), four nodes a unit.
func seedTree(t testing.TB) *topology.Tree {
	return mkTree(t,
		"spine/3/spine: leaf0 leaf1",
		"leaf0/2/leaf: unit0 unit1", "leaf1/2/leaf: unit2 unit3",
		"unit0/1/unit: n00 n01 n02 n03", "unit1/1/unit: n04 n05 n06 n07",
		"unit2/1/unit: n08 n09 n10 n11", "unit3/1/unit: n12 n13 n14 n15")
}

// busyExcept marks every node of tr busy (one GPU used of one) except those named.
func busyExcept(tr *topology.Tree, free ...string) map[string]int64 {
	used := map[string]int64{}
	for _, d := range tr.Domains {
		for _, n := range d.Nodes {
			if !slices.Contains(free, n) {
				used[n] = 1
			}
		}
	}
	return used
}
