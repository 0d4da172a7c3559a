package placement

import "cmp"

// The bottom-up best fit: two candidates that tie on the whole ladder up to their own fit are told apart by
// the domains above them, the nearest first: the one whose enclosing domain has the fewest free pod slots of
// the gang's request (uncapped), then the least share of the requested resources free, wins (Kueue and
// Slurm's "fullest switch first"), so that small gangs gather in already busy domains and keep the emptier
// ones whole for the gangs that need them.

// cmpAbove compares the domains enclosing candidates a and b (node indices when nodes is true, else domain
// indices), bottom-up until they share one: negative when a's are fuller, 0 when they tie all the way.
func (sn *snapshot) cmpAbove(a, b int32, nodes bool) int {
	f := sn.f
	var pa, pb int32
	if nodes {
		pa, pb = f.nodeDom[a], f.nodeDom[b]
	} else {
		pa, pb = f.domains[a].parent, f.domains[b].parent
	}
	for pa != pb && pa >= 0 && pb >= 0 {
		fa, fb := sn.domFree(pa), sn.domFree(pb)
		if c := cmp.Or(cmp.Compare(fa.slots, fb.slots), cmp.Compare(fa.fit, fb.fit)); c != 0 {
			return c
		}
		pa, pb = f.domains[pa].parent, f.domains[pb].parent
	}
	return 0
}

// freeCap is what a domain has free for the gang: pod slots of its request, not capped at M, and fitOf.
type freeCap struct {
	slots int64
	fit   float64
	gen   int32 // the refresh it was computed for
}

// domFree returns domain d's free capacity, computed once per refresh.
func (sn *snapshot) domFree(d int32) freeCap {
	if len(sn.free) < len(sn.f.domains) {
		sn.free = make([]freeCap, len(sn.f.domains))
	}
	if sn.free[d].gen == sn.refreshes {
		return sn.free[d]
	}
	c, s := sn.c, sn.s
	dd := &sn.f.domains[d]
	var total int64
	for n := dd.lo; n < dd.hi; n++ {
		best := int64(-1)
		for k, col := range s.cols {
			if v := (c.alloc[col][n] - c.used[col][n]) / s.req[k]; best < 0 || v < best {
				best = v
			}
		}
		total += max(best, 0)
	}
	sn.free[d] = freeCap{slots: total, fit: sn.fitOf(dd.lo, dd.hi), gen: sn.refreshes}
	return sn.free[d]
}
