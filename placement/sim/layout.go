package sim

import (
	"slices"

	"github.com/fabricmap/fabricmap/placement"
)

// level is the fabric level (index in Fabric.Tiers: 0 a node, 1 the lowest domains, …) of the smallest domain
// holding nodes.
func (m *measure) level(nodes []string) int {
	tier, _, _ := m.f.Span(nodes)
	return m.levelOfTier(tier)
}

// levelOfTier is a tier's index among the fabric's tiers.
func (m *measure) levelOfTier(tier int) int {
	if i := slices.Index(m.tiers, tier); i >= 0 {
		return i
	}
	return 0
}

// layout is where the job's traffic runs with rank i on ranks[i]: the highest level of any DP ring (stage s of
// every replica: ranks s, pp+s, 2pp+s, …) and of any PP hop (ranks i and i+1 of one replica).
func (m *measure) layout(ranks []string, dp, pp int) Layout {
	var l Layout
	ring := make([]string, 0, dp)
	for s := range pp {
		ring = ring[:0]
		for g := range dp {
			ring = append(ring, ranks[g*pp+s])
		}
		l.Ring = max(l.Ring, m.level(ring))
	}
	for g := range dp {
		for s := 0; s+1 < pp; s++ {
			l.Hop = max(l.Hop, m.level(ranks[g*pp+s:g*pp+s+2]))
		}
	}
	return l
}

// ideal is the best layout any placement could give j on the empty fabric, a lower bound for each part: a DP
// ring needs a domain of dp pods, a replica one of pp pods.
func (m *measure) ideal(j Job) Layout {
	dp, pp := j.Shape()
	slots, ok := m.empty[j.GPUsPerPod]
	if !ok {
		slots = make([]int, len(m.nodeIdx))
		for i, a := range m.alloc {
			slots[i] = int(a / max(j.GPUsPerPod, 1))
		}
		m.empty[j.GPUsPerPod] = slots
	}
	ring, _ := m.optimalTier(slots, dp)
	hop, _ := m.optimalTier(slots, pp)
	return Layout{Ring: m.levelOfTier(ring), Hop: m.levelOfTier(hop)}
}

// nodeGPUs returns every node's allocatable GPUs in fabric order.
func nodeGPUs(f *placement.Fabric, nodes []placement.Node) []int64 {
	idx := nodeIndex(f)
	out := make([]int64, len(idx))
	for _, n := range nodes {
		if i, ok := idx[n.Name]; ok {
			out[i] = n.Allocatable[GPU]
		}
	}
	return out
}
