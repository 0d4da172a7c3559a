package placement

import (
	"fmt"
	"slices"
	"strings"
)

// Plan is a placement: which node each rank goes to, the tiers reached and why.
type Plan struct {
	// Gang is the gang's name.
	Gang string `json:"gang"`
	// Ranks[i] is the node of rank i. Ranks g*PP … g*PP+PP-1 form PP group g.
	Ranks []string `json:"ranks"`
	// Roles[i] is the role of rank i, for a gang given by roles.
	Roles []string `json:"roles,omitempty"`
	// GroupOf[i] is the PP group of rank i for a gang given by roles: the main role's pods form the groups,
	// the other roles' pods are in none (-1).
	GroupOf []int `json:"groupOf,omitempty"`
	// GangDomain is the smallest domain holding the whole gang (a node's name at tier 0), at GangTier.
	GangDomain   string `json:"gangDomain"`
	GangTier     int    `json:"gangTier"`
	GangTierName string `json:"gangTierName"`
	// GroupTier is the highest tier any PP group spans; Groups[g] is the smallest domain holding group g.
	GroupTier     int      `json:"groupTier"`
	GroupTierName string   `json:"groupTierName"`
	Groups        []string `json:"groups"`
	// Used counts the domains the gang uses at each tier below its own, from the top down to nodes.
	Used []TierUse `json:"used"`
	// FreeLeft is how many more pods of this request the gang domain could still take.
	FreeLeft int64 `json:"freeLeft"`
	// Fit is the weighted share of the gang domain's requested resources left free (lower is tighter).
	Fit float64 `json:"fit"`
	// DegradedUplinks is how many uplinks of the domains the gang uses (its own domain and those below it
	// holding its pods) fabric health judged degraded or down.
	DegradedUplinks int `json:"degradedUplinks,omitempty"`
	// Avoided are the domains with degraded uplinks that the ladder without its degraded-uplinks key would
	// have used and this plan does not use, sorted: each lost to a healthier domain of its tier.
	Avoided []string `json:"avoided,omitempty"`
	// Victims are the gangs to preempt first, sorted (Preempt only).
	Victims []string `json:"victims,omitempty"`
	// Explanation says in one line why this placement.
	Explanation string `json:"explanation"`
}

// TierUse is how many domains of one tier a plan uses.
type TierUse struct {
	Tier    int    `json:"tier"`
	Name    string `json:"name"`
	Domains int    `json:"domains"`
}

// plan turns a candidate into a Plan: ranks in depth-first node order, so each PP group sits in one block.
// With roles, the other roles' pods are placed next to the main role's (placeOthers) and ranks follow the
// roles' order; nil when they fit nowhere within the hard limit.
func (sn *snapshot) plan(c *candidate) *Plan {
	f, s := sn.f, sn.s
	picks := slices.Clone(c.picks)
	slices.SortFunc(picks, func(a, b pick) int { return int(a.node - b.node) })
	p := &Plan{Gang: s.g.Name, Ranks: make([]string, 0, s.g.Pods), Fit: c.fit}
	idx := make([]int32, 0, s.m)
	for _, pk := range picks {
		for range pk.pods {
			idx = append(idx, pk.node)
		}
	}
	node, dom, counts := c.node, c.dom, c.counts
	all := idx
	if len(s.others) > 0 {
		scope := dom
		if node >= 0 {
			scope = -(node + 2)
		}
		others, final, ok := sn.placeOthers(scope, picks)
		if !ok {
			return nil
		}
		all = nil
		for i, r := range s.g.Roles {
			nodes := others[i]
			if i == s.main {
				nodes = idx
			}
			for j, n := range nodes {
				all = append(all, n)
				p.Roles = append(p.Roles, r.Name)
				if i == s.main {
					p.GroupOf = append(p.GroupOf, j/s.p)
				} else {
					p.GroupOf = append(p.GroupOf, -1)
				}
			}
		}
		if final >= 0 {
			node, dom = -1, final
			counts, _ = sn.counts(dom, distinctPicks(all), nil)
		}
	}
	for _, n := range all {
		p.Ranks = append(p.Ranks, f.nodes[n])
	}
	if node >= 0 {
		p.GangDomain, p.GangTier = f.nodes[node], 0
		p.FreeLeft = int64(sn.slots[node]) - int64(s.m)
	} else {
		dd := &f.domains[dom]
		p.GangDomain, p.GangTier = dd.name, dd.tier
		p.FreeLeft = sn.domSlots(dom) - int64(s.m)
		for i, n := range counts {
			l := len(counts) - 1 - i
			p.Used = append(p.Used, TierUse{Tier: f.levels[l], Name: f.TierName(f.levels[l]), Domains: n})
		}
	}
	p.GangTierName = f.TierName(p.GangTier)
	for g := range s.groups {
		part := idx[g*s.p : (g+1)*s.p]
		d := f.lca(slices.Min(part), slices.Max(part))
		name, tier := f.nodes[part[0]], 0
		if d >= 0 {
			name, tier = f.domains[d].name, f.domains[d].tier
		}
		p.Groups = append(p.Groups, name)
		p.GroupTier = max(p.GroupTier, tier)
	}
	p.GroupTierName = f.TierName(p.GroupTier)
	if node < 0 && f.anyDegraded {
		for _, d := range f.degradedUsed(dom, all) {
			p.DegradedUplinks += int(f.domains[d].degraded)
		}
	}
	p.Explanation = sn.explain(p)
	return p
}

// distinctPicks returns one pick per distinct node of nodes, in node order, with its number of pods.
func distinctPicks(nodes []int32) []pick {
	sorted := slices.Sorted(slices.Values(nodes))
	var out []pick
	for _, n := range sorted {
		if k := len(out); k > 0 && out[k-1].node == n {
			out[k-1].pods++
			continue
		}
		out = append(out, pick{node: n, pods: 1})
	}
	return out
}

// search returns the best plan (nil when there is none): the strict pass, then for a gang of several roles
// that found nothing the loose one (roles.go).
func (sn *snapshot) search() *Plan {
	p := sn.best()
	if p == nil && len(sn.s.others) > 0 {
		sn.loose = true
		p = sn.best()
		sn.loose = false
	}
	return p
}

// decide returns the best plan (nil when there is none). When the fabric has degraded uplinks, it also runs
// the search blind to them and records in the plan the domains with degraded uplinks that the blind choice
// would use and this one does not (Plan.Avoided). Both searches get the same budget for exact fills.
func (sn *snapshot) decide() *Plan {
	spent := sn.exactSpent
	p := sn.search()
	if p == nil || p.GangTier == 0 || !sn.f.anyDegraded {
		return p
	}
	after := sn.exactSpent
	sn.exactSpent, sn.blind = spent, true
	alt := sn.search()
	sn.exactSpent, sn.blind = after, false
	if alt == nil || alt.DegradedUplinks <= p.DegradedUplinks {
		return p
	}
	f := sn.f
	used := map[int32]bool{}
	for _, d := range f.degradedUsed(f.byName[p.GangDomain], f.indices(p.Ranks)) {
		used[d] = true
	}
	for _, d := range f.degradedUsed(f.byName[alt.GangDomain], f.indices(alt.Ranks)) {
		if !used[d] {
			p.Avoided = append(p.Avoided, f.domains[d].name)
		}
	}
	slices.Sort(p.Avoided)
	p.Explanation = sn.explain(p)
	return p
}

// indices returns the fabric indices of the named nodes.
func (f *Fabric) indices(nodes []string) []int32 {
	out := make([]int32, len(nodes))
	for i, n := range nodes {
		out[i] = f.nodeIdx[n]
	}
	return out
}

// degradedUsed returns the domains with degraded uplinks among domain d and the domains below it that hold
// any of nodes (fabric indices), each once.
func (f *Fabric) degradedUsed(d int32, nodes []int32) []int32 {
	var out []int32
	if f.domains[d].degraded > 0 {
		out = append(out, d)
	}
	for _, n := range nodes {
		for x := f.nodeDom[n]; x != d && x >= 0; x = f.domains[x].parent {
			if f.domains[x].degraded > 0 && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// uplinks says "1 degraded uplink" or "n degraded uplinks".
func uplinks(n int) string {
	if n == 1 {
		return "1 degraded uplink"
	}
	return fmt.Sprintf("%d degraded uplinks", n)
}

// explain writes the plan's one-line explanation.
func (sn *snapshot) explain(p *Plan) string {
	s := sn.s
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods in %s %s (tier %d, the lowest that holds them", len(p.Ranks), p.GangTierName, p.GangDomain, p.GangTier)
	if s.hard != noCap {
		fmt.Fprintf(&b, "; hard limit tier %d", s.hard)
	}
	b.WriteString(")")
	if s.groups > 1 {
		fmt.Fprintf(&b, "; %d PP groups of %d, the widest within one %s (tier %d)", s.groups, s.p, p.GroupTierName, p.GroupTier)
	}
	if len(p.Used) > 0 {
		parts := make([]string, len(p.Used))
		for i, u := range p.Used {
			parts[i] = fmt.Sprintf("%s %d", u.Name, u.Domains)
		}
		fmt.Fprintf(&b, "; domains used: %s", strings.Join(parts, ", "))
	}
	if p.DegradedUplinks > 0 {
		fmt.Fprintf(&b, "; %s in the domains used", uplinks(p.DegradedUplinks))
	}
	if len(p.Avoided) > 0 {
		f := sn.f
		parts := make([]string, len(p.Avoided))
		for i, name := range p.Avoided {
			d := &f.domains[f.byName[name]]
			parts[i] = fmt.Sprintf("%s %s (%s)", f.TierName(d.tier), name, uplinks(int(d.degraded)))
		}
		if len(parts) == 1 {
			fmt.Fprintf(&b, "; %s lost to a healthier %s at the same tier", parts[0], f.TierName(f.domains[f.byName[p.Avoided[0]]].tier))
		} else {
			fmt.Fprintf(&b, "; %s lost to healthier domains at the same tiers", strings.Join(parts, ", "))
		}
	}
	if len(s.others) > 0 {
		fmt.Fprintf(&b, "; roles planned with their own requests, %s the largest", s.g.Roles[s.main].Name)
	}
	fmt.Fprintf(&b, "; %d more such pods fit there", p.FreeLeft)
	if len(p.Victims) > 0 {
		fmt.Fprintf(&b, "; preempts %s", strings.Join(p.Victims, ", "))
	}
	return b.String()
}
