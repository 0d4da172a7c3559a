package placement

import (
	"math"
	"slices"
)

// Place finds the best placement of g on the cluster's free capacity (see the package comment for the
// ladder). Bad input is an *InputError naming the field; a valid gang that does not fit within its hard
// limit is ErrNoPlacement. Place does not change the cluster: Bind the plan to do so.
func (c *Cluster) Place(g Gang) (*Plan, error) {
	sn, err := c.snapshotFor(&g)
	if err != nil {
		return nil, err
	}
	defer sn.release()
	p := sn.decide()
	if p == nil {
		return nil, ErrNoPlacement
	}
	return p, nil
}

// snapshotFor checks g (an *InputError for bad input, a refusal for a gang larger than the cluster) and takes
// the snapshot of free slots that Place and Preempt search; release it when done.
func (c *Cluster) snapshotFor(g *Gang) (*snapshot, error) {
	s, err := c.check(g)
	if err != nil {
		return nil, err
	}
	if err := c.checkSize(s); err != nil {
		return nil, err
	}
	return newSnapshot(c, s), nil
}

// checkSize refuses a gang larger than the whole cluster could ever hold (every node empty).
func (c *Cluster) checkSize(s *shape) error {
	var total int64
	for i := range c.fabric.nodes {
		best := int64(s.m)
		for k, col := range s.cols {
			best = min(best, c.alloc[col][i]/s.req[k])
		}
		total += best
		if total >= int64(s.m) {
			return nil
		}
	}
	return inputErr("gang.pods", "%d pods do not fit even in the empty cluster (%d pods of this request at most)", s.m, total)
}

// candidate is one way to place the gang: its domain (or node), group level and the fill found.
type candidate struct {
	node   int32 // >= 0 when the gang sits on one node
	dom    int32
	tau    int // level index of the highest group span
	picks  []pick
	counts []int // used domains per level, from the level below the gang's down to nodes
	// deg is the degraded uplinks of the domains used: the gang's domain and those below it holding its pods.
	deg  int
	left int64 // pod slots left in the gang's domain
	fit  float64
	// lb is a lower bound on counts[0] (0 when unknown): the fewest children that can hold the gang.
	lb int
}

// pick is a number of pods on one node.
type pick struct {
	node int32
	pods int
}

// best returns the best plan, or nil when none exists within the hard limit.
func (sn *snapshot) best() *Plan {
	f, s := sn.f, sn.s
	// Tier 0: one node holds every pod; the fewest slots left, then the tightest fit, then the first.
	bestNode, bestLeft, bestFit := int32(-1), int64(0), 0.0
	for n := range int32(len(f.nodes)) {
		if int(sn.slots[n]) < s.m || !sn.roomForOthers(n, n+1) {
			continue
		}
		left := int64(sn.slots[n]) - int64(s.m)
		if bestNode >= 0 && left > bestLeft {
			continue
		}
		fit := sn.fitOf(n, n+1)
		if bestNode < 0 || left < bestLeft || fit < bestFit || fit == bestFit && sn.cmpAbove(n, bestNode, true) < 0 {
			bestNode, bestLeft, bestFit = n, left, fit
		}
	}
	if bestNode >= 0 {
		return sn.plan(&candidate{node: bestNode, dom: -1, picks: []pick{{bestNode, s.m}}, left: bestLeft, fit: bestFit})
	}
	var bestC *candidate
	// Domains, tier by tier, up to the hard limit.
	for l := 1; l < len(f.levels) && f.levels[l] <= s.hard; l++ {
		var cands []*candidate
		var block []candidate
		minTau := len(f.levels)
		for _, d := range f.order {
			dd := &f.domains[d]
			if dd.tier != f.levels[l] || sn.domSlots(d) < int64(s.m) || !sn.roomForOthers(dd.lo, dd.hi) {
				continue
			}
			tau := sn.groupTierOf(d)
			if tau < 0 || tau > minTau {
				continue
			}
			if tau < minTau {
				minTau, cands = tau, cands[:0]
			}
			if len(block) == cap(block) {
				block = make([]candidate, 0, max(16, 2*cap(block)))
			}
			block = append(block, candidate{node: -1, dom: d, tau: tau, left: sn.domSlots(d) - int64(s.m), lb: sn.childBound(d, tau)})
			cands = append(cands, &block[len(block)-1])
		}
		// The candidates with the smallest (bound, slots left) first, then only those that can still win: a
		// candidate needs at least lb children, so with lb above the best's child count (or equal to it and
		// more slots left, when the count is the whole vector) it cannot.
		minLB, minLeft := 0, int64(0)
		for i, c := range cands {
			if i == 0 || c.lb < minLB || c.lb == minLB && c.left < minLeft {
				minLB, minLeft = c.lb, c.left
			}
		}
		for pass := range 2 {
			for _, c := range cands {
				first := c.lb == minLB && c.left == minLeft
				if first != (pass == 0) || pass == 1 && !sn.canWin(c, bestC) {
					continue
				}
				sn.fillCandidate(c, bestC)
				if bestC == nil || sn.better(c, bestC) {
					if bestC != nil {
						sn.spare = bestC.picks[:0]
					}
					if math.IsInf(c.fit, 1) {
						dd := &f.domains[c.dom]
						c.fit = sn.fitOf(dd.lo, dd.hi)
					}
					bestC = c
				} else {
					sn.spare = c.picks[:0]
				}
			}
		}
		if bestC != nil {
			return sn.plan(bestC)
		}
	}
	return nil
}

// better orders candidates of one gang tier and group level: fewer domains per tier from the top, then fewer
// degraded uplinks in the domains used, then the tighter fit (fewer of the gang's pod slots left in its
// domain, then the lower weighted share of free resources, then the fuller enclosing domains, bottom-up);
// name order (the search's order) breaks the remaining ties.
func (sn *snapshot) better(a, b *candidate) bool {
	if c := slices.Compare(a.counts, b.counts); c != 0 {
		return c < 0
	}
	if a.deg != b.deg {
		return a.deg < b.deg
	}
	if a.left != b.left {
		return a.left < b.left
	}
	if a.fit != b.fit {
		return a.fit < b.fit
	}
	if c := sn.cmpAbove(a.dom, b.dom, false); c != 0 {
		return c < 0
	}
	return a.dom < b.dom
}

// canWin reports whether candidate c, not yet filled, may still beat best. When the child count is the whole
// vector (a domain of nodes), c's degraded uplinks are its own, so with as many nodes it wins only with fewer
// of them, or as many and no more slots left.
func (sn *snapshot) canWin(c, best *candidate) bool {
	switch {
	case best == nil || c.lb == 0 || c.lb < best.counts[0]:
		return true
	case c.lb > best.counts[0]:
		return false
	case len(best.counts) > 1:
		return true
	}
	own := sn.degradedOf(c.dom)
	return own < best.deg || own == best.deg && c.left <= best.left
}

// childBound is a lower bound on how many children of candidate d the fill uses, for counts[0]: the units
// to place over the largest child's capacity. It is 0 (no bound) when d's children do not sit on the level
// right below d's, where counts[0] counts.
func (sn *snapshot) childBound(d int32, tau int) int {
	f, s := sn.f, sn.s
	dd := &f.domains[d]
	top := f.levelIndex(dd.tier)
	grouped := f.levels[tau] < dd.tier && s.p > 1
	need := s.m
	if grouped {
		need = s.groups
	}
	largest := 0
	if dd.leaf {
		if top != 1 {
			return 0
		}
		for n := dd.lo; n < dd.hi; n++ {
			v := int(sn.slots[n])
			if grouped {
				v /= s.p
			}
			largest = max(largest, v)
		}
	} else {
		for _, ch := range dd.children {
			if f.levelIndex(f.domains[ch].tier) != top-1 {
				return 0
			}
			var v int
			if grouped {
				v = int(sn.gcapAt(tau)[ch])
			} else {
				v = int(min(sn.domSlots(ch), int64(s.m)))
			}
			largest = max(largest, v)
		}
	}
	if largest == 0 {
		return 0
	}
	return (need + largest - 1) / largest
}

// fillCandidate places the gang inside c.dom and records the counts and fit; the fit is only computed when
// the counts and slots left tie with best's (it cannot matter otherwise).
func (sn *snapshot) fillCandidate(c *candidate, best *candidate) {
	f, s := sn.f, sn.s
	tau := f.levels[c.tau]
	buf := sn.spare
	sn.spare = nil
	switch {
	case (f.domains[c.dom].tier <= tau || s.p == 1) && sn.exactFits(c.dom, s.m):
		c.picks = sn.exactFill(c.dom, s.m, buf)
	case f.domains[c.dom].tier <= tau || s.p == 1:
		c.picks = sn.fill(c.dom, s.m, -1, buf)
	default:
		c.picks = sn.fill(c.dom, s.groups, tau, buf)
	}
	c.counts, c.deg = sn.counts(c.dom, c.picks, c.counts)
	dd := &f.domains[c.dom]
	c.left = sn.domSlots(c.dom) - int64(s.m)
	c.fit = math.Inf(1)
	if best == nil || slices.Equal(c.counts, best.counts) && c.deg == best.deg && c.left == best.left {
		c.fit = sn.fitOf(dd.lo, dd.hi)
	}
}

// counts returns, for the levels below d's tier from the top down to nodes, how many domains the picks use,
// and the degraded uplinks of d and of the domains below it that the picks use.
func (sn *snapshot) counts(d int32, picks []pick, buf []int) ([]int, int) {
	f := sn.f
	top := f.levelIndex(f.domains[d].tier)
	out := slices.Grow(buf[:0], top)[:top]
	clear(out)
	deg := sn.degradedOf(d)
	if sn.stamp == nil {
		sn.stamp = make([]int32, len(f.domains))
	}
	sn.gen++
	for _, p := range picks {
		out[top-1]++ // nodes (level 0) sit last
		for x := f.nodeDom[p.node]; x != d && x >= 0; x = f.domains[x].parent {
			if sn.stamp[x] == sn.gen {
				break
			}
			sn.stamp[x] = sn.gen
			out[top-1-f.levelIndex(f.domains[x].tier)]++
			deg += sn.degradedOf(x)
		}
	}
	return out, deg
}

// fitOf is the weighted share of the gang domain's (nodes [lo, hi)) requested resources left free after
// placing the gang: lower is a tighter fit.
func (sn *snapshot) fitOf(lo, hi int32) float64 {
	c, s := sn.c, sn.s
	var score, wsum float64
	for k, col := range s.cols {
		var alloc, free int64
		for n := lo; n < hi; n++ {
			alloc += c.alloc[col][n]
			free += c.alloc[col][n] - c.used[col][n]
		}
		if alloc == 0 {
			continue
		}
		w := 1.0
		if v, ok := s.g.Weights[c.resName(col)]; ok {
			w = v
		}
		left := free - int64(s.m)*s.req[k]
		score += w * float64(left) / float64(alloc)
		wsum += w
	}
	if wsum == 0 {
		return 0
	}
	return score / wsum
}

// resName returns the resource name of a column.
func (c *Cluster) resName(col int) string {
	for r, i := range c.res {
		if i == col {
			return r
		}
	}
	return ""
}
