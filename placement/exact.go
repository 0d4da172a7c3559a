package placement

// The exact fill: for small instances, a knapsack over the candidate's subtree finds the placement with the
// fewest domains used at each tier (key 3 of the ladder) exactly, where the greedy fill may use one more.

// exactLevels is the most tree levels the exact fill handles; exactWork bounds its work (members of the
// candidate's subtree x pods squared), and exactBudget the work (exactCost) of the larger fills one search
// may still run exactly, shared by its candidates (about a third of a millisecond); larger instances use the
// greedy fill.
const (
	exactLevels = 8
	exactWork   = 1 << 20
	exactBudget = 1 << 15
)

// dpVec counts used domains per level (index 0: nodes); vectors compare from the highest level down.
type dpVec [exactLevels]int32

// lessFrom reports whether a < b comparing levels top-1 down to 0.
func lessFrom(a, b *dpVec, top int) bool {
	for i := top - 1; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// dpCell is the best vector for one amount (ties broken by the fewest degraded uplinks of the domains used,
// the ladder's key 4, then by the fewest slots left free in them, key 5's best fit), or unreachable.
type dpCell struct {
	v    dpVec
	deg  int64
	left int64
	ok   bool
}

// exact holds one exact fill: per domain, the amount chosen for each child (row) and total (column), for
// the reconstruction.
type exact struct {
	sn     *snapshot
	choice map[int32]choices
}

// choices is a rows x (units+1) table, flat.
type choices struct {
	rows, width int
	b           []int32
}

// exactFits reports whether the exact fill should run for m pods in domain d: when the candidate's nodes and
// domains times the pods squared are at most exactWork, or else when the knapsack's own work (exactCost) fits
// in what is left of the snapshot's exactBudget. A domain of nodes does not need it: there the greedy fill's
// count, the largest nodes first, is already the fewest.
func (sn *snapshot) exactFits(d int32, m int) bool {
	f := sn.f
	dd := &f.domains[d]
	if dd.leaf || len(f.levels) > exactLevels {
		return false
	}
	if size := int64(dd.hi-dd.lo) + int64(dd.below); size*int64(m)*int64(m) <= exactWork {
		return true
	}
	limit := exactBudget - sn.exactSpent
	if cost := sn.exactCost(d, m, limit); cost <= limit {
		sn.exactSpent += cost
		return true
	}
	return false
}

// exactCost is the knapsack's work for units pods in domain d: per domain of the subtree, its amounts times
// its members' amounts; it stops counting past limit.
func (sn *snapshot) exactCost(d int32, units int, limit int64) int64 {
	f := sn.f
	dd := &f.domains[d]
	u := min(sn.domSlots(d), int64(units))
	if dd.leaf {
		return u * (int64(dd.hi-dd.lo) + min(sn.domSlots(d), int64(dd.hi-dd.lo)*u))
	}
	var cost int64
	for _, c := range dd.children {
		capa := min(sn.domSlots(c), u)
		cost += u * (1 + capa)
		if capa > 0 {
			cost += sn.exactCost(c, int(capa), limit-cost)
		}
		if cost > limit {
			break
		}
	}
	return cost
}

// exactFill places m pods in domain d with the lexicographically fewest domains per level, top down, then
// the fewest degraded uplinks below d.
func (sn *snapshot) exactFill(d int32, m int, out []pick) []pick {
	e := &exact{sn: sn, choice: map[int32]choices{}}
	t := e.solve(d, m)
	if !t[m].ok {
		return sn.fill(d, m, -1, out) // cannot happen: the candidate holds m pods
	}
	return e.rebuild(d, m, out)
}

// solve returns, for a = 0..units, the best vector placing a pods below d (d itself not counted).
func (e *exact) solve(d int32, units int) []dpCell {
	sn, f := e.sn, e.sn.f
	dd := &f.domains[d]
	g := make([]dpCell, units+1)
	g[0].ok = true
	rows := len(dd.children)
	if dd.leaf {
		rows = int(dd.hi - dd.lo)
	}
	choice := choices{rows: rows, width: units + 1, b: make([]int32, rows*(units+1))}
	row := 0
	add := func(capa int, lvl int, sub []dpCell, deg int64) {
		ch := choice.b[row*(units+1) : (row+1)*(units+1)]
		row++
		for a := units; a >= 1; a-- {
			for b := 1; b <= min(a, capa); b++ {
				prev := &g[a-b]
				if !prev.ok || sub != nil && !sub[b].ok {
					continue
				}
				v := prev.v
				v[lvl]++
				left, dg := prev.left+int64(capa-b), prev.deg+deg
				if sub != nil {
					for i := range v {
						v[i] += sub[b].v[i]
					}
					left += sub[b].left
					dg += sub[b].deg
				}
				if !g[a].ok || lessFrom(&v, &g[a].v, exactLevels) || v == g[a].v && (dg < g[a].deg || dg == g[a].deg && left < g[a].left) {
					g[a] = dpCell{v: v, deg: dg, left: left, ok: true}
					ch[a] = int32(b)
				}
			}
		}
	}
	if dd.leaf {
		for n := dd.lo; n < dd.hi; n++ {
			add(int(sn.slots[n]), 0, nil, 0)
		}
	} else {
		for _, c := range dd.children {
			capa := int(min(sn.domSlots(c), int64(units)))
			if capa == 0 {
				row++
				continue
			}
			add(capa, f.levelIndex(f.domains[c].tier), e.solve(c, capa), int64(sn.degradedOf(c)))
		}
	}
	e.choice[d] = choice
	return g
}

// rebuild turns the recorded choices into picks: the children walked last to first, as the knapsack added them.
func (e *exact) rebuild(d int32, a int, out []pick) []pick {
	f := e.sn.f
	dd := &f.domains[d]
	choice := e.choice[d]
	for i := choice.rows - 1; i >= 0 && a > 0; i-- {
		b := int(choice.b[i*choice.width+a])
		if b == 0 {
			continue
		}
		if dd.leaf {
			out = append(out, pick{dd.lo + int32(i), b})
		} else {
			out = e.rebuild(dd.children[i], b, out)
		}
		a -= b
	}
	return out
}
