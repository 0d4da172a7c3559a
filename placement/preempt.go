package placement

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Preempt places g, evicting whole lower-priority preemptible gangs when, and only when, g does not fit on
// free capacity within its hard limit. It chooses the option with the lowest gang tier, then the lowest PP-group
// tier, then the fewest victim gangs, then the fewest victim GPU-hours, then the scope with the fewest degraded
// uplinks of its own, then the rest of the ladder. The plan's
// Victims name the gangs to evict; the cluster is left unchanged (Remove the victims and Bind the plan).
// Non-preemptible gangs and gangs of equal or higher priority are never chosen. The fewest-victims step is
// exact: a branch and bound over the gangs with pods in each candidate domain (see fewest.go), within a work
// budget no realistic cluster reaches. Preempt charges and restores victims on the cluster while it searches:
// do not run it concurrently with other calls on c.
func (c *Cluster) Preempt(g Gang) (*Plan, error) {
	sn, err := c.snapshotFor(&g)
	if err != nil {
		return nil, err
	}
	defer sn.release()
	s := sn.s
	if p := sn.decide(); p != nil {
		return p, nil
	}
	pr := c.newPreemption(sn)
	if len(pr.eligible) == 0 {
		return nil, fmt.Errorf("gang %q: %w (no running gang is preemptible and of lower priority)", g.Name, ErrNoPreemption)
	}
	f := c.fabric
	for l := 0; l < len(f.levels) && f.levels[l] <= s.hard; l++ {
		best := pr.level(l)
		if best == nil {
			continue
		}
		pr.evict(best.victims, -1)
		sn.refresh(0, int32(len(f.nodes)))
		p := sn.decide()
		pr.evict(best.victims, 1)
		if p == nil {
			return nil, fmt.Errorf("gang %q: preemption option in scope %d vanished (a bug)", g.Name, best.scope)
		}
		for _, v := range best.victims {
			p.Victims = append(p.Victims, v.Name)
		}
		slices.Sort(p.Victims)
		p.Explanation = sn.explain(p)
		return p, nil
	}
	return nil, fmt.Errorf("gang %q: %w", g.Name, ErrNoPreemption)
}

// preemption holds the state of one Preempt call.
type preemption struct {
	c  *Cluster
	sn *snapshot
	// work counts the node slots recomputed by fit checks, against searchBudget.
	work int64
	// eligible are the gangs that may be evicted; byNode lists, per node, the eligible gangs on it.
	eligible []*victim
	byNode   map[int32][]*victim
}

// victim is an eligible gang with its usage in column form, to evict and restore it cheaply.
type victim struct {
	*Running
	nodes []int32
	pods  []int64
	cols  []int
	q     []int64
}

// option is one way to make room: evict victims, then the gang fits in scope with its PP groups at level tau.
type option struct {
	scope        int32 // domain index, or -(node+2) for a single node
	tau          int
	victims      []*victim
	gpuHours     float64
	degraded     int // the scope's own degraded uplinks (0 for a node)
	scopeOrdinal int32
}

// less orders options: group level, then fewer victims, then fewer GPU-hours, then fewer degraded uplinks,
// then scope order.
func (o *option) less(b *option) bool {
	return before(o.tau, len(o.victims), o.gpuHours, o.degraded, o.scopeOrdinal, b)
}

// before reports whether an option with these figures orders before b (see less).
func before(tau, victims int, gpuHours float64, degraded int, scopeOrdinal int32, b *option) bool {
	return cmp.Or(cmp.Compare(tau, b.tau), cmp.Compare(victims, len(b.victims)),
		cmp.Compare(gpuHours, b.gpuHours), cmp.Compare(degraded, b.degraded), cmp.Compare(scopeOrdinal, b.scopeOrdinal)) < 0
}

func (c *Cluster) newPreemption(sn *snapshot) *preemption {
	pr := &preemption{c: c, sn: sn, byNode: map[int32][]*victim{}}
	for _, r := range c.Running() {
		r := c.running[r.Name]
		if !r.Preemptible || r.Priority >= sn.s.g.Priority {
			continue
		}
		v := &victim{Running: r}
		for _, res := range r.Request.Names() {
			v.cols, v.q = append(v.cols, c.column(res)), append(v.q, r.Request[res])
		}
		for _, n := range slices.Sorted(maps.Keys(r.Pods)) {
			i := c.fabric.nodeIdx[n]
			v.nodes, v.pods = append(v.nodes, i), append(v.pods, int64(r.Pods[n]))
			pr.byNode[i] = append(pr.byNode[i], v)
		}
		pr.eligible = append(pr.eligible, v)
	}
	return pr
}

// scopes returns the places the gang may sit at level l: nodes at level 0 (encoded -(node+2)), else domains.
func (pr *preemption) scopes(l int) []int32 {
	f := pr.c.fabric
	var out []int32
	if l == 0 {
		for n := range pr.byNode {
			out = append(out, -(n + 2))
		}
		slices.Sort(out)
		return out
	}
	for _, d := range f.order {
		if f.domains[d].tier == f.levels[l] {
			out = append(out, d)
		}
	}
	return out
}

// rangeOf returns the node range of a scope.
func (pr *preemption) rangeOf(scope int32) (lo, hi int32) {
	f := pr.c.fabric
	if scope < 0 {
		n := -scope - 2
		return n, n + 1
	}
	d := &f.domains[scope]
	return d.lo, d.hi
}

// evict charges (sign -1) or restores (sign 1) the victims' usage.
func (pr *preemption) evict(victims []*victim, sign int64) {
	for _, v := range victims {
		pr.charge(v, sign)
	}
}

// charge adds sign x v's usage to its nodes.
func (pr *preemption) charge(v *victim, sign int64) {
	used := pr.c.used
	for i, n := range v.nodes {
		for k, col := range v.cols {
			used[col][n] += sign * v.q[k] * v.pods[i]
		}
	}
}
