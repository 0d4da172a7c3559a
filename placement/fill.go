package placement

import (
	"cmp"
	"slices"
	"sort"
)

// The greedy fill, for candidates too large for the exact one: level by level from the gang's domain down,
// the fewest members of the level that hold the gang, chosen among the children of the members chosen one
// level up (pooled, as Kueue's TAS does), so that each level's count is the fewest given the levels above.

// item is a member (node or domain) of the level being filled, with its capacity in the fill's units, its
// degraded uplinks and its free pod slots (which break ties: of two members that hold as many groups, the
// healthier one is used, then the fuller one, to keep the emptier one whole).
type item struct {
	idx  int32
	node bool
	capa int
	deg  int32 // degraded uplinks (a domain's own; 0 for a node)
	pods int64
	take int // units the fill puts there
}

// fill places need units in domain d. Units are pods when tau < 0, else whole groups that must stay within
// domains of tier at most tau.
func (sn *snapshot) fill(d int32, need int, tau int, out []pick) []pick {
	return sn.fillAt([]int32{d}, need, tau, out, 0)
}

// fillAt places need units in the domains doms, which together hold them: it chooses the fewest of their
// children (nodes for a domain of nodes) that hold the units, then fills the chosen ones, pooled again, one
// level down. A child of tier at most tau takes whole groups and is filled on its own, in pods. depth indexes
// the scratch buffers.
func (sn *snapshot) fillAt(doms []int32, need int, tau int, out []pick, depth int) []pick {
	f, s := sn.f, sn.s
	for len(sn.scratch) <= depth {
		sn.scratch = append(sn.scratch, nil)
		sn.pool = append(sn.pool, nil)
	}
	items := sn.scratch[depth][:0]
	gl := 0
	if tau >= 0 {
		gl = f.levelIndex(tau)
	}
	for _, d := range doms {
		dd := &f.domains[d]
		if dd.leaf {
			for n := dd.lo; n < dd.hi; n++ {
				v := int(sn.slots[n])
				if tau >= 0 {
					v /= s.p
				}
				if v > 0 {
					items = append(items, item{idx: n, node: true, capa: v, pods: int64(sn.slots[n])})
				}
			}
			continue
		}
		for _, ch := range dd.children {
			var v int
			if tau < 0 {
				v = int(min(sn.domSlots(ch), int64(s.m)))
			} else {
				v = int(sn.gcapAt(gl)[ch])
			}
			if v > 0 {
				items = append(items, item{idx: ch, capa: v, deg: int32(sn.degradedOf(ch)), pods: sn.domSlots(ch)})
			}
		}
	}
	sortItems(items)
	sn.scratch[depth] = items
	chooseItems(items, need)
	next, nextNeed := sn.pool[depth][:0], 0
	for _, it := range items {
		k := it.take
		switch {
		case k == 0:
		case it.node && tau >= 0:
			out = append(out, pick{it.idx, k * s.p})
		case it.node:
			out = append(out, pick{it.idx, k})
		case tau >= 0 && f.domains[it.idx].tier <= tau:
			out = sn.fillAt([]int32{it.idx}, k*s.p, -1, out, depth+1)
		default:
			next, nextNeed = append(next, it.idx), nextNeed+k
		}
	}
	sn.pool[depth] = next
	if len(next) > 0 {
		slices.Sort(next) // members in fabric order: equal ones then need no sorting
		out = sn.fillAt(next, nextNeed, tau, out, depth+1)
	}
	return out
}

// chooseItems sets take on the fewest items (sorted by sortItems) that hold need units: the largest whole
// until the rest fits in one, the smallest that fits it (of one capacity, the healthiest first). When they
// hold more than need, each chosen item, largest first, is then swapped for the smallest unchosen one, with
// no more degraded uplinks, that still lets them hold need: as many items, but fuller ones, so that the
// emptier ones stay whole (the best fit of the set, as the exact fill's). The units go to the chosen items
// largest first.
func chooseItems(items []item, need int) {
	rest, slack := need, 0
	for i := 0; rest > 0 && i < len(items); i++ {
		// The first item (after i) that cannot hold the rest; the one before it is the smallest that can.
		j := i + sort.Search(len(items)-i, func(k int) bool { return items[i+k].capa < rest })
		if j == i {
			items[i].take = items[i].capa
			rest -= items[i].capa
			continue
		}
		c := items[j-1].capa
		items[i+sort.Search(j-i, func(k int) bool { return items[i+k].capa == c })].take = rest
		slack, rest = c-rest, 0
	}
	if slack == 0 {
		return
	}
	for i := range items {
		if items[i].take == 0 {
			continue
		}
		// The smallest unchosen item below this one's capacity but within the slack (the first of its
		// capacity: the fewest free pods).
		swap := -1
		for u := len(items) - 1; u > i && items[u].capa < items[i].capa; u-- {
			if items[u].take == 0 && items[u].capa >= items[i].capa-slack && items[u].deg <= items[i].deg &&
				(swap < 0 || items[u].capa <= items[swap].capa) {
				swap = u
			}
		}
		if swap >= 0 {
			slack -= items[i].capa - items[swap].capa
			items[i].take, items[swap].take = 0, 1
			if slack == 0 {
				break
			}
		}
	}
	rest = need
	for i := range items {
		if items[i].take > 0 {
			items[i].take = min(items[i].capa, rest)
			rest -= items[i].take
		}
	}
}

// sortItems orders items by capacity, largest first, then by degraded uplinks, fewest first, then by free
// pods, fewest first, then in index (depth-first, name) order; sorted input is left as it is.
func sortItems(items []item) {
	switch {
	case slices.IsSortedFunc(items, itemCmp):
		return
	case len(items) <= 12:
		for i := 1; i < len(items); i++ {
			for j := i; j > 0 && itemCmp(items[j], items[j-1]) < 0; j-- {
				items[j], items[j-1] = items[j-1], items[j]
			}
		}
	default:
		slices.SortFunc(items, itemCmp)
	}
}

// itemCmp is the order of sortItems.
func itemCmp(a, b item) int {
	switch {
	case a.capa != b.capa:
		return cmp.Compare(b.capa, a.capa)
	case a.deg != b.deg:
		return cmp.Compare(a.deg, b.deg)
	case a.pods != b.pods:
		return cmp.Compare(a.pods, b.pods)
	case a.node != b.node: // a mixed level: domains before nodes, indices being of two kinds
		return cmp.Compare(btoi(a.node), btoi(b.node))
	}
	return cmp.Compare(a.idx, b.idx)
}
