package peers

import (
	"slices"

	"github.com/fabricmap/fabricmap/placement"
)

// kueue follows Kueue's topology-aware scheduling (KEP-2724) with the BestFit algorithm, for a podset preferred
// at the lowest level: find the lowest level (hostname included) with a domain that fits every pod, and take
// the fitting domain with the least free capacity; then, level by level down to the hosts, pool the children
// of the chosen domains, sort them by free capacity (largest first) and keep the fewest that cover the pods,
// the last one replaced by the smallest that fits the rest. Pod-set slices (PP groups) are not used.
type kueue struct{}

func (kueue) Name() string { return "kueue-tas" }

// kdom is a domain (or a node when node >= 0) with its pods to place.
type kdom struct {
	dom, node int
	capa      int
}

func (kueue) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	v := viewOf(c.Fabric())
	slots := c.Slots(g.Request)
	// Hostname level first.
	bestNode := -1
	for n, s := range slots {
		if s >= g.Pods && (bestNode < 0 || s < slots[bestNode]) {
			bestNode = n
		}
	}
	if bestNode >= 0 {
		ranks, _ := take(nil, v, slots, []int{bestNode}, g.Pods)
		return ranks, nil
	}
	var chosen []kdom
	for _, t := range v.tiers {
		best := -1
		bestFree := 0
		for _, d := range v.byTier[t] {
			if free := v.sum(slots, d); free >= g.Pods && (best < 0 || free < bestFree) {
				best, bestFree = d, free
			}
		}
		if best >= 0 {
			chosen = []kdom{{dom: best, node: -1, capa: bestFree}}
			break
		}
	}
	if chosen == nil {
		return nil, errNoFit
	}
	for chosen[0].node < 0 {
		var pool []kdom
		for _, k := range chosen {
			if len(v.children[k.dom]) == 0 {
				for _, n := range v.members[k.dom] {
					if slots[n] > 0 {
						pool = append(pool, kdom{dom: -1, node: n, capa: slots[n]})
					}
				}
				continue
			}
			for _, ch := range v.children[k.dom] {
				if s := v.sum(slots, ch); s > 0 {
					pool = append(pool, kdom{dom: ch, node: -1, capa: s})
				}
			}
		}
		chosen = minimalCover(pool, g.Pods)
	}
	var ranks []string
	need := g.Pods
	for _, k := range chosen {
		ranks, need = take(ranks, v, slots, []int{k.node}, need)
	}
	if need > 0 {
		return nil, errNoFit
	}
	return ranks, nil
}

// minimalCover keeps the fewest domains (largest first) whose capacity covers need, the last one replaced by
// the smallest that covers the rest; the last one's capacity is cut to what is needed.
func minimalCover(pool []kdom, need int) []kdom {
	slices.SortStableFunc(pool, func(a, b kdom) int { return b.capa - a.capa })
	var out []kdom
	for i := 0; need > 0 && i < len(pool); i++ {
		if pool[i].capa >= need {
			j := i
			for j+1 < len(pool) && pool[j+1].capa >= need {
				j++
			}
			for j > i && pool[j-1].capa == pool[j].capa {
				j-- // the first (by name) of the smallest that fit
			}
			last := pool[j]
			last.capa = need
			return append(out, last)
		}
		out = append(out, pool[i])
		need -= pool[i].capa
	}
	return out
}
