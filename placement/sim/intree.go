package sim

import (
	"fmt"

	"github.com/fabricmap/fabricmap/placement"
)

// InTree models kube-scheduler 1.36's own gang and topology scheduling of a PodGroup whose
// schedulingConstraints.topology names one label key (the in-tree TopologyPlacement plugin, k8s.io/kubernetes
// v1.36.3 pkg/scheduler/framework/plugins/topologyaware): its placements are the domains of that one key, one
// per label value (pods never span two); the scheduler tries each, keeps those whose nodes hold the whole gang,
// and takes the one its PlacementScore plugins rank highest. With the default profile those are
// PodGroupPodsCount (every feasible placement holds the whole gang: a tie) and NodeResourcesFit's
// LeastAllocated over the placement's nodes after the gang, so the emptiest domain in share wins (ties at
// random there, the first in fabric order here). Inside the domain each pod is then scheduled alone, by the
// same LeastAllocated node score: to the node with the largest free share (ties in fabric order), ranks in pod
// order, as the scheduler knows no ranks. A gang no single domain of the key holds stays pending. Free GPUs
// stand in for the cpu and memory the default scoring weighs, which GPU pods request in proportion.
type InTree struct {
	tier  int
	label string
	// names are the fabric's nodes (Fabric.Nodes order); members the indices of each domain of the tier's nodes.
	names   []string
	members [][]int
	// alloc is each node's allocatable GPUs, by index.
	alloc []int64
}

// NewInTree returns the in-tree TopologyPlacement with the topology key of the tier named tierName (leaf,
// spine, …) of f, on nodes (their allocatable GPUs).
func NewInTree(f *placement.Fabric, tierName string, nodes []placement.Node) (*InTree, error) {
	tier, ok := f.TierByName(tierName)
	if !ok {
		return nil, fmt.Errorf("in-tree TopologyPlacement: the fabric has no tier %q", tierName)
	}
	p := &InTree{tier: tier, label: tierName, names: f.Nodes()}
	index := nodeIndex(f)
	p.alloc = make([]int64, len(p.names))
	for _, n := range nodes {
		if i, ok := index[n.Name]; ok {
			p.alloc[i] = n.Allocatable[GPU]
		}
	}
	below := map[string][]int{} // each domain's nodes, children's first
	for _, d := range f.Domains() {
		var ns []int
		for _, n := range d.Nodes {
			ns = append(ns, index[n])
		}
		for _, c := range d.Children {
			ns = append(ns, below[c]...)
		}
		below[d.Name] = ns
		if d.Tier == tier {
			p.members = append(p.members, ns)
		}
	}
	return p, nil
}

// Name implements Placer.
func (p *InTree) Name() string { return "in-tree " + p.label + " key" }

// Place implements Placer.
func (p *InTree) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	slots := c.Slots(g.Request)
	need := int64(g.Pods) * g.Request[GPU]
	best, bestShare := -1, -1.0
	for d, ns := range p.members {
		fit, free, alloc := 0, int64(0), int64(0)
		for _, n := range ns {
			fit += slots[n]
			free += c.Free(p.names[n], GPU)
			alloc += p.alloc[n]
		}
		if fit < g.Pods || alloc == 0 {
			continue
		}
		if share := float64(free-need) / float64(alloc); share > bestShare {
			best, bestShare = d, share
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("%s: no %s domain holds the gang's %d pods", p.Name(), p.label, g.Pods)
	}
	ns := p.members[best]
	free := make([]int64, len(ns))
	room := make([]int, len(ns))
	for i, n := range ns {
		free[i], room[i] = c.Free(p.names[n], GPU), slots[n]
	}
	ranks := make([]string, 0, g.Pods)
	for range g.Pods {
		pick, pickShare := -1, -1.0
		for i, n := range ns {
			if room[i] == 0 || p.alloc[n] == 0 {
				continue
			}
			if share := float64(free[i]-g.Request[GPU]) / float64(p.alloc[n]); share > pickShare {
				pick, pickShare = i, share
			}
		}
		ranks = append(ranks, p.names[ns[pick]])
		free[pick] -= g.Request[GPU]
		room[pick]--
	}
	return ranks, nil
}
