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
func (sn *snapshot) plan(c *candidate) *Plan {
	f, s := sn.f, sn.s
	picks := slices.Clone(c.picks)
	slices.SortFunc(picks, func(a, b pick) int { return int(a.node - b.node) })
	p := &Plan{Gang: s.g.Name, Ranks: make([]string, 0, s.m), Fit: c.fit}
	idx := make([]int32, 0, s.m)
	for _, pk := range picks {
		for range pk.pods {
			p.Ranks = append(p.Ranks, f.nodes[pk.node])
			idx = append(idx, pk.node)
		}
	}
	if c.node >= 0 {
		p.GangDomain, p.GangTier = f.nodes[c.node], 0
		p.FreeLeft = int64(sn.slots[c.node]) - int64(s.m)
	} else {
		dd := &f.domains[c.dom]
		p.GangDomain, p.GangTier = dd.name, dd.tier
		p.FreeLeft = sn.domSlots(c.dom) - int64(s.m)
		for i, n := range c.counts {
			l := len(c.counts) - 1 - i
			p.Used = append(p.Used, TierUse{Tier: f.levels[l], Name: f.TierName(f.levels[l]), Domains: n})
		}
	}
	p.GangTierName = f.TierName(p.GangTier)
	for _, r := range s.g.Roles {
		for range r.Pods {
			p.Roles = append(p.Roles, r.Name)
		}
	}
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
	p.Explanation = sn.explain(p)
	return p
}

// explain writes the plan's one-line explanation.
func (sn *snapshot) explain(p *Plan) string {
	s := sn.s
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods in %s %s (tier %d, the lowest that holds them", s.m, p.GangTierName, p.GangDomain, p.GangTier)
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
	fmt.Fprintf(&b, "; %d more such pods fit there", p.FreeLeft)
	if len(p.Victims) > 0 {
		fmt.Fprintf(&b, "; preempts %s", strings.Join(p.Victims, ", "))
	}
	return b.String()
}
