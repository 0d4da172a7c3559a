package placement

import (
	"cmp"
	"slices"
	"sort"
)

// The victim search: at one level, every scope (node or domain) where the gang fits once all of its eligible
// gangs go is a candidate; the candidates reaching the lowest group level are searched, each for its fewest,
// then cheapest, victims by branch and bound. Only gangs with pods inside a scope can matter to it.

// searchBudget bounds the work of one Preempt call's victim searches, in node slots recomputed by fit checks
// (each check counted at least 16): about a tenth of a second. The search is exact within it (the tests and
// benchmarks stay far below); past it, each remaining scope keeps the best set found so far, never worse than
// the greedy pass that seeds it.
const searchBudget = 1 << 24

// level returns the best option at level index l: the lowest group level any scope reaches with every
// eligible gang in it evicted, then the fewest victims, the fewest GPU-hours, the fewest degraded uplinks of
// the scope's own, the first scope; nil when no scope at this level makes room.
func (pr *preemption) level(l int) *option {
	type cand struct {
		scope   int32
		victims []*victim
	}
	var cands []cand
	bestTau := -1
	for _, scope := range pr.scopes(l) {
		victims := pr.victimsIn(scope)
		if len(victims) == 0 {
			continue // nothing to evict here, and the gang did not fit on free capacity
		}
		pr.evict(victims, -1)
		tau, ok := pr.fits(scope)
		pr.evict(victims, 1)
		if !ok || bestTau >= 0 && tau > bestTau {
			continue
		}
		if tau != bestTau {
			bestTau, cands = tau, cands[:0]
		}
		cands = append(cands, cand{scope, victims})
	}
	var best *option
	for _, c := range cands {
		best = pr.fewest(c.scope, c.victims, bestTau, best)
	}
	return best
}

// victimsIn returns the eligible gangs with pods in scope, in name order.
func (pr *preemption) victimsIn(scope int32) []*victim {
	lo, hi := pr.rangeOf(scope)
	var out []*victim
	seen := map[*victim]bool{}
	for n := lo; n < hi; n++ {
		for _, v := range pr.byNode[n] {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, func(a, b *victim) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// fits recomputes the slots of scope's nodes and reports whether the gang fits in scope, and at which group
// level.
func (pr *preemption) fits(scope int32) (int, bool) {
	sn := pr.sn
	lo, hi := pr.rangeOf(scope)
	pr.work += int64(hi-lo) + 16
	sn.refresh(lo, hi)
	if scope < 0 {
		return 0, int(sn.slots[lo]) >= sn.s.m
	}
	if sn.domSlots(scope) < int64(sn.s.m) {
		return 0, false
	}
	tau := sn.groupTierOf(scope)
	return tau, tau >= 0
}

// slotsIn recomputes and returns the gang's pod slots in scope with nothing evicted.
func (pr *preemption) slotsIn(scope int32) int64 {
	sn := pr.sn
	lo, hi := pr.rangeOf(scope)
	sn.refresh(lo, hi)
	if scope < 0 {
		return int64(sn.slots[lo])
	}
	return sn.domSlots(scope)
}

// bound is a relaxation of "the gang fits in scope": each victim's gain is an upper bound on what evicting
// it adds towards the gang there and need is what is missing with nothing evicted, in the same unit, so a
// set of victims whose gains do not cover need cannot make room.
type bound struct {
	gains map[*victim]int64
	need  int64
}

// slotBound counts pod slots: per node, the most pods any one requested resource a victim frees would hold
// (capped at M), as a node's slots grow by at most the sum.
func (pr *preemption) slotBound(scope int32, victims []*victim) bound {
	s := pr.sn.s
	lo, hi := pr.rangeOf(scope)
	b := bound{gains: make(map[*victim]int64, len(victims)), need: int64(s.m) - pr.slotsIn(scope)}
	for _, v := range victims {
		for i, n := range v.nodes {
			if n < lo || n >= hi {
				continue
			}
			var most int64
			for k, col := range s.cols {
				if j := slices.Index(v.cols, col); j >= 0 {
					most = max(most, (v.q[j]*v.pods[i]+s.req[k]-1)/s.req[k])
				}
			}
			b.gains[v] += min(most, int64(s.m))
		}
	}
	return b
}

// resourceBound counts the requested resource scope lacks most, in pods' worth: the gang's M requests of it
// less what scope's nodes have free, which the victims must free (tighter than slots where many small
// victims share nodes).
func (pr *preemption) resourceBound(scope int32, victims []*victim) bound {
	c, s := pr.c, pr.sn.s
	lo, hi := pr.rangeOf(scope)
	kStar := 0
	var need int64
	for k, col := range s.cols {
		lack := int64(s.m) * s.req[k]
		for n := lo; n < hi; n++ {
			lack -= max(c.alloc[col][n]-c.used[col][n], 0)
		}
		if k == 0 || lack*s.req[kStar] > need*s.req[k] {
			kStar, need = k, lack
		}
	}
	b := bound{gains: make(map[*victim]int64, len(victims)), need: need}
	for _, v := range victims {
		j := slices.Index(v.cols, s.cols[kStar])
		if j < 0 {
			continue
		}
		for i, n := range v.nodes {
			if n >= lo && n < hi {
				b.gains[v] += v.q[j] * v.pods[i]
			}
		}
	}
	return b
}

// victimSearch is one scope's branch and bound: victims ordered by gain (largest first), then GPU-hours, then
// name; the chosen set is charged on the cluster as the search descends.
type victimSearch struct {
	pr      *preemption
	scope   int32
	tau     int
	victims []*victim
	// pre[i] is the sum of the first i gains; minHours[i] the fewest GPU-hours of any victim from i on.
	pre      []int64
	minHours []float64
	// need is what is missing in scope with nothing evicted, in the gains' unit.
	need   int64
	chosen []*victim
	best   *option
}

// fewest returns the better of best and scope's fewest, then cheapest, victims that let the gang sit in scope
// with its groups at level index tau or lower. Evicting every one of victims is known to do so.
func (pr *preemption) fewest(scope int32, victims []*victim, tau int, best *option) *option {
	if o := pr.greedy(scope, victims, tau); best == nil || o.less(best) {
		best = o
	}
	// Both bounds hold; the search prunes with the one that needs more victims from the start. A victim that
	// frees none of the requested resources in scope (no slot gain) cannot help and is left out.
	slots, res := pr.slotBound(scope, victims), pr.resourceBound(scope, victims)
	b := slots
	if fewestCover(res, victims) > fewestCover(slots, victims) {
		b = res
	}
	kept := make([]*victim, 0, len(victims))
	for _, v := range victims {
		if slots.gains[v] > 0 {
			kept = append(kept, v)
		}
	}
	slices.SortFunc(kept, func(x, y *victim) int {
		return cmp.Or(cmp.Compare(b.gains[y], b.gains[x]), cmp.Compare(x.GPUHours, y.GPUHours), cmp.Compare(x.Name, y.Name))
	})
	vs := &victimSearch{pr: pr, scope: scope, tau: tau, victims: kept, best: best, need: b.need,
		pre: make([]int64, len(kept)+1), minHours: make([]float64, len(kept)+1)}
	for i, v := range kept {
		vs.pre[i+1] = vs.pre[i] + b.gains[v]
	}
	for i := len(kept) - 1; i >= 0; i-- {
		vs.minHours[i] = kept[i].GPUHours
		if i+1 < len(kept) {
			vs.minHours[i] = min(vs.minHours[i], vs.minHours[i+1])
		}
	}
	vs.search(0, 0, 0)
	return vs.best
}

// search extends the chosen set with victims from i on; got is the chosen set's total gain and hours its
// GPU-hours. A branch stops when even its cheapest completion cannot beat the best option.
func (vs *victimSearch) search(i int, got int64, hours float64) {
	more, ok := vs.fewestMore(i, vs.need-got)
	if !ok || vs.pr.work > searchBudget {
		return
	}
	if !before(vs.tau, len(vs.chosen)+more, hours+float64(more)*vs.minHours[i], vs.pr.degradedOf(vs.scope), vs.ordinal(), vs.best) {
		return
	}
	if more == 0 {
		if t, ok := vs.pr.fits(vs.scope); ok && t <= vs.tau {
			vs.best = vs.option()
			return // a larger set costs more
		}
	}
	if i == len(vs.victims) {
		return
	}
	v := vs.victims[i]
	vs.pr.charge(v, -1)
	vs.chosen = append(vs.chosen, v)
	vs.search(i+1, got+vs.pre[i+1]-vs.pre[i], hours+v.GPUHours)
	vs.chosen = vs.chosen[:len(vs.chosen)-1]
	vs.pr.charge(v, 1)
	vs.search(i+1, got, hours)
}

// fewestCover is the fewest victims whose gains under b cover its need (their number when none do).
func fewestCover(b bound, victims []*victim) int {
	gains := make([]int64, 0, len(victims))
	for _, v := range victims {
		gains = append(gains, b.gains[v])
	}
	slices.Sort(gains)
	var sum int64
	for k := range gains {
		if sum >= b.need {
			return k
		}
		sum += gains[len(gains)-1-k]
	}
	return len(gains)
}

// fewestMore is the fewest victims from i on whose gains cover missing (0 when nothing is missing); ok is
// false when all of them together do not.
func (vs *victimSearch) fewestMore(i int, missing int64) (int, bool) {
	if missing <= 0 {
		return 0, true
	}
	n := len(vs.victims)
	if vs.pre[n]-vs.pre[i] < missing {
		return 0, false
	}
	return sort.Search(n-i, func(k int) bool { return vs.pre[i+k]-vs.pre[i] >= missing }), true
}

// degradedOf returns a scope's own degraded uplinks: a domain's, none for a node.
func (pr *preemption) degradedOf(scope int32) int {
	if scope < 0 {
		return 0
	}
	return pr.sn.degradedOf(scope)
}

// ordinal is the scope's tie-break rank among options: its first node.
func (vs *victimSearch) ordinal() int32 {
	lo, _ := vs.pr.rangeOf(vs.scope)
	return lo
}

// option records the chosen set as an option.
func (vs *victimSearch) option() *option {
	return vs.pr.newOption(vs.scope, vs.tau, slices.Clone(vs.chosen))
}

// newOption makes the option of evicting victims (sorted by name here) for scope; GPU-hours are summed in
// name order, so that equal sets cost exactly the same.
func (pr *preemption) newOption(scope int32, tau int, victims []*victim) *option {
	slices.SortFunc(victims, func(a, b *victim) int { return cmp.Compare(a.Name, b.Name) })
	lo, _ := pr.rangeOf(scope)
	o := &option{scope: scope, tau: tau, victims: victims, degraded: pr.degradedOf(scope), scopeOrdinal: lo}
	for _, v := range victims {
		o.gpuHours += v.GPUHours
	}
	return o
}

// greedy is the search's starting point: with every victim evicted, restore the costliest first and evict it
// again only when the gang no longer fits at level tau.
func (pr *preemption) greedy(scope int32, victims []*victim, tau int) *option {
	order := slices.Clone(victims)
	slices.SortStableFunc(order, func(a, b *victim) int {
		return cmp.Or(cmp.Compare(b.GPUHours, a.GPUHours), cmp.Compare(a.Name, b.Name))
	})
	pr.evict(order, -1)
	var needed []*victim
	for _, v := range order {
		pr.charge(v, 1)
		if t, ok := pr.fits(scope); ok && t <= tau {
			continue
		}
		pr.charge(v, -1)
		needed = append(needed, v)
	}
	pr.evict(needed, 1)
	return pr.newOption(scope, tau, needed)
}
