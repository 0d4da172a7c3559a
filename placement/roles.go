package placement

import (
	"cmp"
	"fmt"
	"slices"
)

// Gangs of several roles (a launcher and its workers). The ladder places the main role, the largest, with
// its DP x PP groups; the other roles' pods go next to it, each with its own request, so a 1-GPU launcher
// does not take an 8-GPU worker's slot. In the strict pass a domain is a candidate only when it also holds
// the other roles' pods (roomForOthers); the plan then puts them on what the main role's fill leaves, in
// the gang's domain, on a node of the gang when one has room, else on the node closest to the gang's, the
// tightest first (placeOthers). When no domain within the hard limit holds everything that way, a loose
// pass places the main role alone and the other roles' pods as close to it as they fit: the gang's domain
// then grows to hold them, within the hard limit.

// MainRole returns the index of the gang's largest role (-1 without roles): the largest request, each
// quantity counted as a share of the largest quantity of that resource among the roles; ties go to the role
// with more pods, then to the first.
func (g *Gang) MainRole() int {
	if len(g.Roles) == 0 {
		return -1
	}
	sizes := g.roleSizes()
	best := 0
	for i := range g.Roles {
		if c := cmp.Or(cmp.Compare(sizes[i], sizes[best]), cmp.Compare(g.Roles[i].Pods, g.Roles[best].Pods)); c > 0 {
			best = i
		}
	}
	return best
}

// roleSizes returns each role's size: the sum of its quantities, each as a share of the largest quantity of
// that resource among the roles.
func (g *Gang) roleSizes() []float64 {
	top := Resources{}
	for _, r := range g.Roles {
		for k, q := range r.Request {
			top[k] = max(top[k], q)
		}
	}
	sizes := make([]float64, len(g.Roles))
	for i, r := range g.Roles {
		for k, q := range r.Request {
			if top[k] > 0 {
				sizes[i] += float64(q) / float64(top[k])
			}
		}
	}
	return sizes
}

// otherRole is a role other than the main one, its request in cluster columns.
type otherRole struct {
	// role is the index in Gang.Roles; pods how many pods it has.
	role, pods int
	cols       []int
	req        []int64
}

// otherRoles checks the roles other than main and returns them, largest first.
func (c *Cluster) otherRoles(g *Gang, main int) ([]otherRole, error) {
	if main < 0 {
		return nil, nil
	}
	sizes := g.roleSizes()
	var out []otherRole
	for i, r := range g.Roles {
		if i == main {
			continue
		}
		cols, req, err := c.columns(fmt.Sprintf("gang.roles[%d].request", i), r.Request)
		if err != nil {
			return nil, err
		}
		out = append(out, otherRole{role: i, pods: r.Pods, cols: cols, req: req})
	}
	slices.SortStableFunc(out, func(a, b otherRole) int { return cmp.Compare(sizes[b.role], sizes[a.role]) })
	return out, nil
}

// extraUse is what the other roles' pods take on the nodes they go to: per node, per cluster column.
type extraUse map[int32][]int64

// freeAfter returns the free quantity of column col on node n, after extra.
func (sn *snapshot) freeAfter(n int32, col int, extra extraUse) int64 {
	f := sn.c.alloc[col][n] - sn.c.used[col][n]
	if e := extra[n]; e != nil {
		f -= e[col]
	}
	return f
}

// mainSlots returns how many main-role pods node n takes after extra, capped at M.
func (sn *snapshot) mainSlots(n int32, extra extraUse) int64 {
	best := int64(sn.s.m)
	for k, col := range sn.s.cols {
		best = min(best, sn.freeAfter(n, col, extra)/sn.s.req[k])
	}
	return max(best, 0)
}

// room returns how many more pods of role o node n takes after extra (negative: none).
func (sn *snapshot) room(n int32, o *otherRole, extra extraUse) int64 {
	best := int64(-1)
	for k, col := range o.cols {
		v := sn.freeAfter(n, col, extra)/o.req[k] - 1
		if k == 0 || v < best {
			best = v
		}
	}
	return best
}

// add charges one pod of role o to node n in extra.
func (sn *snapshot) add(extra extraUse, n int32, o *otherRole) {
	e := extra[n]
	if e == nil {
		e = make([]int64, len(sn.c.alloc))
		extra[n] = e
	}
	for k, col := range o.cols {
		e[col] += o.req[k]
	}
}

// roomForOthers reports whether nodes [lo, hi) hold the other roles' pods beside the main role's M pods:
// each, largest role first, goes to the node where it costs the fewest main-role slots (the first costing
// none at once), and the slots left must still hold M. True at once without other roles or in the loose pass.
func (sn *snapshot) roomForOthers(lo, hi int32) bool {
	s := sn.s
	if len(s.others) == 0 || sn.loose {
		return true
	}
	extra := extraUse{}
	var lost int64
	for i := range s.others {
		o := &s.others[i]
		for range o.pods {
			best, bestCost := int32(-1), int64(0)
			for n := lo; n < hi; n++ {
				if sn.room(n, o, extra) < 0 {
					continue
				}
				before := sn.mainSlots(n, extra)
				sn.add(extra, n, o)
				cost := before - sn.mainSlots(n, extra)
				sn.sub(extra, n, o)
				if best < 0 || cost < bestCost {
					best, bestCost = n, cost
					if cost == 0 {
						break
					}
				}
			}
			if best < 0 {
				return false
			}
			sn.add(extra, best, o)
			lost += bestCost
		}
	}
	return sn.pre[hi]-sn.pre[lo]-lost >= int64(s.m)
}

// sub takes back one pod of role o from node n in extra.
func (sn *snapshot) sub(extra extraUse, n int32, o *otherRole) {
	for k, col := range o.cols {
		extra[n][col] -= o.req[k]
	}
}

// placeOthers puts the other roles' pods on what the main role's picks leave: within scope (a domain, or
// the node -(scope+2)) first, widening it to the enclosing domain while they do not fit and the hard limit
// allows. Each pod, largest role first, goes to a node of the gang (main picks or other pods placed) with
// room, else to the node whose lowest domain shared with the gang's nodes is lowest, then to the one left
// with the least room for another such pod, then the first. It returns the nodes per role (indexed as
// Gang.Roles) and the scope that holds them; ok is false when they fit nowhere within the hard limit.
func (sn *snapshot) placeOthers(scope int32, picks []pick) (nodes [][]int32, final int32, ok bool) {
	f, s := sn.f, sn.s
	taken := extraUse{}
	for _, pk := range picks {
		e := make([]int64, len(sn.c.alloc))
		for k, col := range s.cols {
			e[col] = s.req[k] * int64(pk.pods)
		}
		taken[pk.node] = e
	}
	for {
		lo, hi := sn.scopeRange(scope)
		if nodes, ok := sn.fillOthers(lo, hi, picks, taken); ok {
			return nodes, scope, true
		}
		var up int32
		if scope < 0 {
			up = f.nodeDom[-scope-2]
		} else {
			up = f.domains[scope].parent
		}
		if up < 0 || f.domains[up].tier > s.hard {
			return nil, scope, false
		}
		scope = up
	}
}

// scopeRange returns the node range of a scope: a domain, or the node -(scope+2).
func (sn *snapshot) scopeRange(scope int32) (lo, hi int32) {
	if scope < 0 {
		return -scope - 2, -scope - 1
	}
	d := &sn.f.domains[scope]
	return d.lo, d.hi
}

// fillOthers places the other roles' pods on nodes [lo, hi) (see placeOthers) on top of taken, which it
// leaves as it found it.
func (sn *snapshot) fillOthers(lo, hi int32, picks []pick, taken extraUse) ([][]int32, bool) {
	s := sn.s
	extra := extraUse{}
	for n, e := range taken {
		extra[n] = slices.Clone(e)
	}
	gang := make([]int32, 0, len(picks))
	for _, pk := range picks {
		gang = append(gang, pk.node)
	}
	slices.Sort(gang)
	out := make([][]int32, len(s.g.Roles))
	for i := range s.others {
		o := &s.others[i]
		for range o.pods {
			best, bestDist, bestRoom := int32(-1), 0, int64(0)
			for n := lo; n < hi; n++ {
				r := sn.room(n, o, extra)
				if r < 0 {
					continue
				}
				d := sn.distance(n, gang)
				if best < 0 || d < bestDist || d == bestDist && r < bestRoom {
					best, bestDist, bestRoom = n, d, r
				}
			}
			if best < 0 {
				return nil, false
			}
			sn.add(extra, best, o)
			out[o.role] = append(out[o.role], best)
			if i, found := slices.BinarySearch(gang, best); !found {
				gang = slices.Insert(gang, i, best)
			}
		}
	}
	return out, true
}

// distance is how far node n is from the gang's nodes (sorted): 0 on one of them, else the tier of the
// lowest domain holding n and one of them (past the top: above every tier).
func (sn *snapshot) distance(n int32, gang []int32) int {
	f := sn.f
	if _, found := slices.BinarySearch(gang, n); found {
		return 0
	}
	for d := f.nodeDom[n]; d >= 0; d = f.domains[d].parent {
		dd := &f.domains[d]
		if i, _ := slices.BinarySearch(gang, dd.lo); i < len(gang) && gang[i] < dd.hi {
			return dd.tier
		}
	}
	return int(^uint(0) >> 1)
}
