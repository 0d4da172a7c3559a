package peers

import (
	"slices"

	"github.com/fabricmap/fabricmap/placement"
)

// koordinator follows FindBestNode of the Koordinator network-topology-aware scheduling proposal: free pod
// slots are listed per domain of the lowest layer (s1) and the one above (s2), each layer sorted by size
// (smallest first); then, in the proposal's order: 1. the first s1 domain that holds the whole gang; 2. PP
// groups packed into s1 domains in that order (ppSameHyperNode); 3. the first s2 domain that holds the gang,
// its s1 domains packed the same way and the rest filled; 5. PP groups packed into s2 domains; 6. any slots.
type koordinator struct{}

func (koordinator) Name() string { return "koordinator-seed" }

func (koordinator) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	v := viewOf(c.Fabric())
	slots := c.Slots(g.Request)
	m, pp := g.Pods, g.PP
	if pp <= 0 || m%pp != 0 {
		pp = 1
	}
	dp := m / pp
	list := func(d int) []string {
		var out []string
		for _, n := range v.members[d] {
			for range slots[n] {
				out = append(out, v.nodes[n])
			}
		}
		return out
	}
	layer := func(doms []int) [][]string {
		var out [][]string
		for _, d := range doms {
			if l := list(d); len(l) > 0 {
				out = append(out, l)
			}
		}
		slices.SortStableFunc(out, func(a, b []string) int { return len(a) - len(b) })
		return out
	}
	s1 := layer(v.bottom)
	var s2doms []int
	if len(v.tiers) > 1 {
		s2doms = v.byTier[v.tiers[1]]
	}
	// 1. All in one s1 domain.
	for _, l := range s1 {
		if len(l) >= m {
			return l[:m], nil
		}
	}
	// 2. Every PP group in one s1 domain.
	if found, res, _ := ppSameHyperNode(s1, dp, pp); found {
		return res, nil
	}
	// 3. All in one s2 domain.
	for _, d := range s2doms {
		if len(list(d)) < m {
			continue
		}
		var under []int
		for _, b := range v.bottom {
			if isBelow(v, b, d) {
				under = append(under, b)
			}
		}
		_, res, remain := ppSameHyperNode(layer(under), dp, pp)
		for _, r := range remain {
			res = append(res, r...)
		}
		return res[:m], nil
	}
	// 5. Every PP group in one s2 domain.
	found, res, remain := ppSameHyperNode(layer(s2doms), dp, pp)
	if found {
		return res, nil
	}
	// 6. Anywhere.
	for _, r := range remain {
		res = append(res, r...)
	}
	if len(res) >= m {
		return res[:m], nil
	}
	return nil, errNoFit
}

// ppSameHyperNode takes whole PP groups from each list in turn until dp groups are found; it returns whether
// they were, the slots taken, and the lists' leftovers, largest first.
func ppSameHyperNode(lists [][]string, dp, pp int) (bool, []string, [][]string) {
	var res []string
	var remain [][]string
	found := false
	for _, l := range lists {
		begin := 0
		for !found && begin+pp <= len(l) {
			res = append(res, l[begin:begin+pp]...)
			begin += pp
			if dp--; dp == 0 {
				found = true
			}
		}
		if begin < len(l) {
			remain = append(remain, l[begin:])
		}
	}
	slices.SortStableFunc(remain, func(a, b []string) int { return len(b) - len(a) })
	return found, res, remain
}
