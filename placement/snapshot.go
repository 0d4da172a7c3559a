package placement

import (
	"slices"
	"sync"
)

// snapshot holds, for one gang shape, the pod slots of every node and the derived capacities of every domain:
// built in one pass over the nodes and one over the domains, then read by the search.
type snapshot struct {
	c *Cluster
	s *shape
	f *Fabric
	// slots[n] is how many of the gang's pods node n can take now, capped at M.
	slots []int32
	// pre[i] is the sum of slots[:i]; a domain's slots are pre[hi]-pre[lo].
	pre []int64
	// gcap[l][d] is how many whole PP groups domain d holds when each group must stay within a domain of tier
	// at most levels[l]; valid (for the domains inside [lo, hi)) once groupCaps ran.
	gcap      [][]int32
	gcapValid bool
	// gcapDone[l] says gcap[l] is computed for the current refresh.
	gcapDone []bool
	// lo and hi bound the nodes the last refresh recomputed.
	lo, hi int32
	// npre[i] is the sum of slots[:i]/P, the group capacity of the nodes themselves.
	npre []int64
	// stamp and gen mark the domains already counted by counts.
	stamp []int32
	gen   int32
	// scratch and pool hold one item and one domain buffer per fill depth; spare is a pick buffer to reuse.
	scratch [][]item
	pool    [][]int32
	spare   []pick
	// refreshes counts the refreshes; free[d] caches domFree(d) for the one it names.
	refreshes int32
	free      []freeCap
	// exactSpent is the exact fills' work so far, against exactBudget.
	exactSpent int64
	// blind makes the search ignore degraded uplinks (key 4 of the ladder): the choice it would make without
	// them, which the plan's explanation compares with.
	blind bool
	// loose lets a gang of several roles take a domain without room for its other roles' pods beside the
	// main role's: the pass after the strict one found nothing (roles.go).
	loose bool
}

// newSnapshot computes the slots of every node for s from the cluster's free resources.
func newSnapshot(c *Cluster, s *shape) *snapshot {
	f := c.fabric
	n := len(f.nodes)
	sn := &snapshot{c: c, s: s, f: f}
	if b, ok := buffers.Get().(*snapBuffers); ok && cap(b.slots) >= n {
		sn.slots, sn.pre, sn.npre, sn.gcap = b.slots[:n], b.pre[:n+1], b.npre, b.gcap
	} else {
		sn.slots, sn.pre = make([]int32, n), make([]int64, n+1)
	}
	sn.pre[0] = 0
	sn.refresh(0, int32(n))
	return sn
}

// snapBuffers are a snapshot's per-node arrays, pooled across calls (Place on 100k nodes would otherwise
// allocate a megabyte a call).
type snapBuffers struct {
	slots     []int32
	pre, npre []int64
	gcap      [][]int32
}

var buffers sync.Pool

// release returns the snapshot's per-node arrays to the pool; the snapshot must not be used afterwards.
func (sn *snapshot) release() {
	buffers.Put(&snapBuffers{slots: sn.slots, pre: sn.pre, npre: sn.npre, gcap: sn.gcap})
	sn.slots, sn.pre, sn.npre, sn.gcap = nil, nil, nil, nil
}

// refresh recomputes the slots of nodes [lo, hi) from the cluster's free resources, then the prefix sums of
// that range and the group capacities of the domains inside it. Only domains inside [lo, hi) may be read
// afterwards unless the range is the whole fabric.
func (sn *snapshot) refresh(lo, hi int32) {
	c, s := sn.c, sn.s
	m := int64(s.m)
	if len(s.cols) == 1 { // the common case, without the inner loop
		alloc, used, req := c.alloc[s.cols[0]][lo:hi], c.used[s.cols[0]][lo:hi], s.req[0]
		slots := sn.slots[lo:hi]
		for i := range slots {
			free := alloc[i] - used[i]
			switch {
			case free < req:
				slots[i] = 0
			case free >= m*req:
				slots[i] = int32(m)
			default:
				slots[i] = int32(free / req)
			}
		}
	} else {
		for i := lo; i < hi; i++ {
			best := m
			for k, col := range s.cols {
				free := c.alloc[col][i] - c.used[col][i]
				if q := free / s.req[k]; q < best {
					best = q
				}
			}
			sn.slots[i] = int32(max(best, 0))
		}
	}
	for i := lo; i < hi; i++ {
		sn.pre[i+1] = sn.pre[i] + int64(sn.slots[i])
	}
	sn.lo, sn.hi, sn.gcapValid = lo, hi, false
	sn.refreshes++
}

// domSlots returns the pod slots of domain d.
func (sn *snapshot) domSlots(d int32) int64 {
	dd := &sn.f.domains[d]
	return sn.pre[dd.hi] - sn.pre[dd.lo]
}

// groupCaps prepares the group capacities of the refreshed range: the nodes' own (npre); the levels are then
// computed on first use by gcapAt. Only needed when the gang has several groups of more than one pod.
func (sn *snapshot) groupCaps() {
	if sn.gcapValid {
		return
	}
	sn.gcapValid = true
	f, p := sn.f, int64(sn.s.p)
	if len(sn.npre) < len(sn.slots)+1 {
		sn.npre = make([]int64, len(sn.slots)+1)
	}
	if len(sn.gcap) < len(f.levels) {
		sn.gcap = make([][]int32, len(f.levels))
	}
	sn.gcapDone = slices.Grow(sn.gcapDone[:0], len(f.levels))[:len(f.levels)]
	clear(sn.gcapDone)
	for i := sn.lo; i < sn.hi; i++ {
		sn.npre[i+1] = sn.npre[i] + int64(sn.slots[i])/p
	}
}

// gcapAt returns the group capacities at level index l (valid for the domains inside the refreshed range),
// computing them on first use after a refresh.
func (sn *snapshot) gcapAt(l int) []int32 {
	sn.groupCaps()
	if sn.gcapDone[l] {
		return sn.gcap[l]
	}
	sn.gcapDone[l] = true
	f, p, tau := sn.f, int64(sn.s.p), sn.f.levels[l]
	if len(sn.gcap[l]) < len(f.domains) {
		sn.gcap[l] = make([]int32, len(f.domains))
	}
	g := sn.gcap[l]
	for _, d := range f.order {
		dd := &f.domains[d]
		if dd.lo < sn.lo || dd.hi > sn.hi {
			continue
		}
		switch {
		case dd.tier <= tau:
			g[d] = int32(sn.domSlots(d) / p)
		case dd.leaf:
			g[d] = int32(sn.npre[dd.hi] - sn.npre[dd.lo])
		default:
			var sum int64
			for _, ch := range dd.children {
				sum += int64(g[ch])
			}
			g[d] = int32(min(sum, int64(sn.s.groups)))
		}
	}
	return g
}

// degradedOf returns domain d's degraded uplinks as the search counts them: none when blind.
func (sn *snapshot) degradedOf(d int32) int {
	if sn.blind {
		return 0
	}
	return int(sn.f.domains[d].degraded)
}

// levelIndex returns the index in levels of the highest level at most tier.
func (f *Fabric) levelIndex(tier int) int {
	i := 0
	for i+1 < len(f.levels) && f.levels[i+1] <= tier {
		i++
	}
	return i
}

// grouped reports whether the gang's groups constrain anything: several groups of more than one pod.
func (s *shape) grouped() bool { return s.groups > 1 && s.p > 1 }

// groupTierOf returns the lowest level index whose blocks hold all of the gang's groups within domain d
// (index of d's own tier when none below does); -1 when the group-tier cap cannot be met in d.
func (sn *snapshot) groupTierOf(d int32) int {
	f, s := sn.f, sn.s
	top := f.levelIndex(f.domains[d].tier)
	switch {
	case s.p == 1: // one pod a group: every group sits on a node
		return 0
	case s.groups == 1 && f.levels[top] <= s.groupTier: // the one group spans the gang's domain
		return top
	case s.groups == 1:
		return -1
	}
	limit := min(top, f.levelIndex(s.groupTier))
	for l := 0; l <= limit; l++ {
		if int(sn.gcapAt(l)[d]) >= s.groups {
			return l
		}
	}
	return -1
}
