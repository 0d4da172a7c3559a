package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
)

// GPU is the resource name the generated fabrics and traces use.
const GPU = "nvidia.com/gpu"

// FabricSpec describes a generated leaf/spine fabric: leaves (tier 1) of NodesPerLeaf nodes, spines (tier 2) of
// LeavesPerSpine leaves, one root (tier 3).
type FabricSpec struct {
	// Nodes is the fabric's size; the last leaf and spine may be partial.
	Nodes int
	// NodesPerLeaf (32), LeavesPerSpine (8) and GPUsPerNode (8) default when zero.
	NodesPerLeaf   int
	LeavesPerSpine int
	GPUsPerNode    int64
}

// withDefaults fills unset fields: 32 nodes a leaf, 8 leaves a spine, 8 GPUs a node.
func (s FabricSpec) withDefaults() FabricSpec {
	if s.NodesPerLeaf <= 0 {
		s.NodesPerLeaf = 32
	}
	if s.LeavesPerSpine <= 0 {
		s.LeavesPerSpine = 8
	}
	if s.GPUsPerNode <= 0 {
		s.GPUsPerNode = 8
	}
	return s
}

// Build returns the fabric's tree and its nodes (GPUsPerNode GPUs each, none used).
func (s FabricSpec) Build() (*topology.Tree, []placement.Node, error) {
	s = s.withDefaults()
	if s.Nodes <= 0 {
		return nil, nil, fmt.Errorf("fabric: %d nodes; want at least one", s.Nodes)
	}
	t := topology.NewTree()
	root := &topology.Domain{Name: "fabric", Tier: 3, TierName: topology.TierNameRoot}
	_ = t.Add(root)
	nodes := make([]placement.Node, 0, s.Nodes)
	var spine, leaf *topology.Domain
	for i := range s.Nodes {
		if i%(s.NodesPerLeaf*s.LeavesPerSpine) == 0 {
			spine = &topology.Domain{Name: fmt.Sprintf("spine-%03d", i/(s.NodesPerLeaf*s.LeavesPerSpine)), Tier: 2, TierName: topology.TierNameSpine, Parent: root.Name}
			_ = t.Add(spine)
			root.Children = append(root.Children, spine.Name)
		}
		if i%s.NodesPerLeaf == 0 {
			leaf = &topology.Domain{Name: fmt.Sprintf("leaf-%04d", i/s.NodesPerLeaf), Tier: 1, TierName: topology.TierNameLeaf, Parent: spine.Name}
			_ = t.Add(leaf)
			spine.Children = append(spine.Children, leaf.Name)
		}
		n := fmt.Sprintf("node-%06d", i)
		leaf.Nodes = append(leaf.Nodes, n)
		nodes = append(nodes, placement.Node{Name: n, Allocatable: placement.Resources{GPU: s.GPUsPerNode, "pods": 110}})
	}
	return t, nodes, nil
}

// Fill marks about fraction of the nodes fully used (at random, seeded), as background load.
func Fill(nodes []placement.Node, fraction float64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range nodes {
		if rng.Float64() < fraction {
			nodes[i].Used = placement.Resources{GPU: nodes[i].Allocatable[GPU], "pods": 1}
		}
	}
}

// KueuePodset is the gang of Kueue's TAS assignment benchmark on n nodes: one podset of 9 x min(n, 256) pods of
// 8 CPUs (they land 12 a node).
func KueuePodset(n int) placement.Gang {
	return placement.Gang{Name: "podset", Pods: 9 * min(n, 256), Request: placement.Resources{"cpu": 8000, "pods": 1}}
}

// KueueShape builds the tree of Kueue's TAS benchmarks: racks (tier 1) of 16 nodes, blocks (tier 2) of 16
// racks, n nodes of 96 CPUs (millicores), 384 Gi of memory and 110 pods, optionally with one 1-CPU/1-Gi pod
// of usage on every node.
func KueueShape(n int, withUsage bool) (*topology.Tree, []placement.Node) {
	t := topology.NewTree()
	nodes := make([]placement.Node, 0, n)
	for i := range n {
		block, rack := fmt.Sprintf("b%d", i/256), fmt.Sprintf("b%d-r%d", i/256, i/16%16)
		if t.Domains[block] == nil {
			_ = t.Add(&topology.Domain{Name: block, Tier: 2, TierName: "block"})
		}
		if t.Domains[rack] == nil {
			_ = t.Add(&topology.Domain{Name: rack, Tier: 1, TierName: "rack", Parent: block})
			t.Domains[block].Children = append(t.Domains[block].Children, rack)
		}
		name := fmt.Sprintf("n%05d", i)
		t.Domains[rack].Nodes = append(t.Domains[rack].Nodes, name)
		node := placement.Node{Name: name, Allocatable: placement.Resources{"cpu": 96000, "memory": 384 << 30, "pods": 110}}
		if withUsage {
			node.Used = placement.Resources{"cpu": 1000, "memory": 1 << 30, "pods": 1}
		}
		nodes = append(nodes, node)
	}
	return t, nodes
}

// NewCluster compiles tr and makes the cluster of nodes on it, with no running gang: the starting point of a
// benchmark or a replay.
func NewCluster(tr *topology.Tree, nodes []placement.Node) (*placement.Cluster, error) {
	f, err := placement.NewFabric(tr)
	if err != nil {
		return nil, err
	}
	c, _, err := placement.NewCluster(f, nodes, nil)
	return c, err
}
