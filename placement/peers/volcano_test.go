package peers

import (
	"slices"

	"github.com/fabricmap/fabricmap/placement"
)

// volcano follows the network-topology-aware plugin of Volcano 1.12 as documented: HyperNodes are tried tier by
// tier from the lowest ("tier gradient"), up to highestTierAllowed in hard mode; at a tier every HyperNode is
// dry-run (tasks one by one, each to the feasible node with the best binpack score, i.e. the most used), and
// among those that hold the whole job the HyperNode with the highest binpack score (utilisation after
// placement) wins. It knows nothing of PP groups. The pod-by-pod dry run is computed with one sort: a node
// only gets fuller as pods land on it, so it stays the best node until it is full.
type volcano struct{}

func (volcano) Name() string { return "volcano" }

func (volcano) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	v := viewOf(c.Fabric())
	f := c.Fabric()
	slots := c.Slots(g.Request)
	hard := 1 << 30
	if g.HardTierName != "" {
		hard, _ = f.TierByName(g.HardTierName)
	} else if g.HardTier > 0 {
		hard = g.HardTier
	}
	// Free GPUs per node, the binpack score's input (nodes with fewer free GPUs are fuller).
	freeGPUs := c.Slots(placement.Resources{"nvidia.com/gpu": 1})
	gpus := func(n int) int { return freeGPUs[n] }
	for _, t := range v.tiers {
		if t > hard {
			break
		}
		best, bestScore := -1, 0.0
		for _, d := range v.byTier[t] {
			free := v.sum(slots, d)
			if free < g.Pods {
				continue
			}
			// Binpack score of the HyperNode after placement: the share of its slots in use.
			score := 1 - float64(free-g.Pods)/float64(len(v.members[d])*max(1, maxSlots(slots, v.members[d])))
			if best < 0 || score > bestScore {
				best, bestScore = d, score
			}
		}
		if best < 0 {
			continue
		}
		nodes := slices.Clone(v.members[best])
		slices.SortStableFunc(nodes, func(a, b int) int {
			// Most used first: fewest free GPUs, then name.
			if ga, gb := gpus(a), gpus(b); ga != gb {
				if ga < gb {
					return -1
				}
				return 1
			}
			return cmpStr(v.nodes[a], v.nodes[b])
		})
		nodes = slices.DeleteFunc(nodes, func(n int) bool { return slots[n] == 0 })
		ranks, need := take(nil, v, slots, nodes, g.Pods)
		if need > 0 {
			return nil, errNoFit
		}
		return ranks, nil
	}
	return nil, errNoFit
}

// maxSlots is the largest slot count among nodes (a stand-in for a node's capacity in pods).
func maxSlots(slots []int, nodes []int) int {
	m := 0
	for _, n := range nodes {
		m = max(m, slots[n])
	}
	return m
}
