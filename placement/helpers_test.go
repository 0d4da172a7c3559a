package placement

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
)

// mkTree builds a tree from lines "name/tier[/tierName]: member member …"; members that are not defined as
// domains are nodes.
func mkTree(t testing.TB, lines ...string) *topology.Tree {
	t.Helper()
	tr := topology.NewTree()
	members := map[string][]string{}
	for _, l := range lines {
		head, rest, _ := strings.Cut(l, ":")
		parts := strings.Split(strings.TrimSpace(head), "/")
		tier, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("bad line %q", l)
		}
		d := &topology.Domain{Name: parts[0], Tier: tier}
		if len(parts) > 2 {
			d.TierName = parts[2]
		}
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
		members[d.Name] = strings.Fields(rest)
	}
	for name, ms := range members {
		d := tr.Domains[name]
		for _, m := range ms {
			if c, ok := tr.Domains[m]; ok {
				d.Children = append(d.Children, m)
				c.Parent = name
			} else {
				d.Nodes = append(d.Nodes, m)
			}
		}
		slices.Sort(d.Children)
		slices.Sort(d.Nodes)
	}
	return tr
}

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
