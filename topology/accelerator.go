package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// acceleratorPrefix starts the name of every accelerator domain and sub-domain that stands for an NVLink domain
// ("nvl-" and the NVLink domain): it keeps them apart from names derived from switches (nameAccelerators
// settles any clash that is left).
const acceleratorPrefix = "nvl-"

// maxListedNodes is how many node names a Problem lists before it only counts the rest.
const maxListedNodes = 8

// leafPlan is what addAcceleratorDomains does below one leaf.
type leafPlan struct {
	leaf *Domain
	// size is how many nodes the leaf held before any went into an accelerator domain.
	size int
	// parts are the leaf's nodes by their NVLink domain (canonical), sorted; bare the nodes without one.
	parts map[string][]string
	bare  []string
	// build is set when the leaf gets accelerator domains: at least half of its nodes have an NVLink domain.
	build bool
	// built are the accelerator domains and sub-domains below the leaf, once made (specs).
	built []*acceleratorSpec
}

// addAcceleratorDomains puts the nodes of every NVLink domain into accelerator domains below their leaves:
// the switch tree stays whole for every node, and NVLink refines it within a leaf. The rule is that a node's
// NVLink domain is a claim about that node only: it places that node and never moves another.
//
//   - NVLink domains are compared as CanonicalNVLinkID writes them, and named after that form, so the spellings
//     of one domain are one domain and its name does not depend on who reported it first.
//   - A leaf gets accelerator domains when at least half of its nodes have an NVLink domain. Its nodes of one
//     NVLink domain form one accelerator domain below it (a part, when the domain has nodes behind other leaves
//     too); each node without an NVLink domain stands alone in an accelerator domain of its own, named after the
//     node (its GPUs share NVLink within it only; its node label has that value, as without the domain), since a
//     domain holds either nodes or domains (Volcano): the node without a domain is the one set apart, and the
//     others keep their domains and tiers. A leaf most of whose nodes have no NVLink domain keeps every node
//     directly, and a Problem names the nodes whose NVLink domain is not used there.
//   - An NVLink domain all of whose nodes sit in one leaf is one accelerator domain "nvl-<domain>". One whose
//     nodes sit in several leaves (a multi-rack NVL72, or nodes of other leaves claiming it) has one part in each
//     leaf that builds, marked NVLinkPart: the part of its home, the leaf holding more than two thirds of its
//     nodes, keeps the domain's own name, the others are "nvl-<domain>-<leaf>"; so a few nodes of another leaf
//     that claim a domain get a part in their own leaf and leave the domain's own accelerator domain, its name,
//     tier and members as they were. Without a home (racks of a multi-rack domain, near even) every part is
//     named after its leaf and marked tied in its Vote: KeepNames lets it keep the name a part of the same
//     domain had (a tie keeps the current name), so more claimants elsewhere do not rename it either, and a
//     tray going down does not rename the racks. A part of fewer than minNVLinkPart nodes beside the domain's
//     home is a suspect claim: a Problem names each of its nodes, which stay in their part.
//   - Sub-domains (NodeEvidence.NVLinkSubDomain, canonical too) are a tier of their own when at least half of
//     the nodes in accelerator domains have one; an accelerator domain at least half of whose nodes have one
//     holds one sub-domain per rack, and each of its nodes without one stands alone in a sub-domain named after
//     it; otherwise it holds its nodes directly. A few nodes never add or remove the sub-domain tier.
//   - When it adds any accelerator domain, it first moves every domain of t up one tier (two with
//     sub-domains), so that accelerator domains (and sub-domains below them) are the lowest tiers everywhere
//     and tiers still grow upward.
//
// leaves are the leaf domains of t. Names do not depend on the order of the input: a name two accelerator
// domains want goes to the one named after its node, then to the one with more nodes, then the domain's own
// name before a part's, then by name (nameAccelerators).
func addAcceleratorDomains(t *Tree, leaves []*Domain, byNode nodeIndex) []Problem {
	nvl, sub := canonicalNVLink(byNode)
	var problems []Problem
	plans := make([]*leafPlan, 0, len(leaves))
	for _, l := range leaves {
		p := planLeaf(l, nvl)
		if len(p.parts) > 0 && !p.build {
			problems = append(problems, p.unusedProblem(byNode))
		}
		plans = append(plans, p)
	}
	if !slices.ContainsFunc(plans, func(p *leafPlan) bool { return p.build }) {
		return problems
	}
	claims := claimsByDomain(plans)
	subs := planSubDomains(plans, sub)
	shift := 1
	if subs.tier {
		shift = 2
	}
	for _, d := range t.Domains {
		d.Tier += shift
	}
	problems = append(problems, evictPrefixed(t)...)
	var specs []*acceleratorSpec
	for _, p := range plans {
		if p.build {
			p.built = p.specs(claims, subs, sub, shift, byNode)
			specs = append(specs, p.built...)
		}
	}
	problems = append(problems, nameAccelerators(t, specs)...)
	for _, p := range plans {
		if p.build {
			problems = append(problems, p.problems(claims, subs, sub, byNode)...)
		}
	}
	return append(problems, subs.unusedProblem(byNode)...)
}

// canonicalNVLink returns each node's NVLink domain and, when it has one, its sub-domain, as CanonicalNVLinkID
// writes them; nodes without an NVLink domain are in neither map.
func canonicalNVLink(byNode nodeIndex) (nvl, sub map[string]string) {
	nvl, sub = map[string]string{}, map[string]string{}
	for _, e := range byNode.list {
		n := e.Node
		d := CanonicalNVLinkID(e.NVLinkDomain)
		if d == "" {
			continue
		}
		nvl[n] = d
		if s := CanonicalNVLinkID(e.NVLinkSubDomain); s != "" {
			sub[n] = s
		}
	}
	return nvl, sub
}

// planLeaf sorts l's nodes by NVLink domain and decides whether l gets accelerator domains.
func planLeaf(l *Domain, nvl map[string]string) *leafPlan {
	p := &leafPlan{leaf: l, size: len(l.Nodes), parts: map[string][]string{}}
	for _, n := range l.Nodes {
		if d := nvl[n]; d != "" {
			p.parts[d] = append(p.parts[d], n)
		} else {
			p.bare = append(p.bare, n)
		}
	}
	claimed := len(l.Nodes) - len(p.bare)
	p.build = claimed > 0 && 2*claimed >= len(l.Nodes)
	return p
}

// claimants returns the leaf's nodes that have an NVLink domain, sorted.
func (p *leafPlan) claimants() []string {
	var out []string
	for _, nodes := range p.parts {
		out = append(out, nodes...)
	}
	slices.Sort(out)
	return out
}

// unusedProblem says that p's leaf, most of whose nodes have no NVLink domain, gets no accelerator domains:
// a problem of its first node with one.
func (p *leafPlan) unusedProblem(byNode nodeIndex) Problem {
	claimed := p.claimants()
	return Problem{Node: claimed[0], Source: byNode.source(claimed[0]), Reason: fmt.Sprintf(
		"leaf domain %q gets no accelerator domains: %d of its %d nodes have no NVLink domain, more than half, and a domain holds either nodes or domains; the NVLink domains of the others (%s) are not used there, and every node stays directly in the leaf",
		p.leaf.Name, len(p.bare), p.size, nameList(claimed))}
}

// specs returns the accelerator domains and sub-domains below p's leaf, not yet named nor added: one per NVLink
// domain of its nodes, one per node without one, and below them the sub-domains subs allows.
func (p *leafPlan) specs(claims map[string]*nvlinkClaims, subs subDomainPlan, sub map[string]string, tier int,
	byNode nodeIndex,
) []*acceleratorSpec {
	var out []*acceleratorSpec
	for _, nv := range slices.Sorted(maps.Keys(p.parts)) {
		nodes := p.parts[nv]
		c := claims[nv]
		s := &acceleratorSpec{parent: p.leaf, count: len(nodes), d: &Domain{
			Tier: tier, TierName: TierNameAccelerator, NVLinkDomain: nv, NVLinkPart: !c.whole(),
			Source: nodesSource(nodes, byNode),
		}}
		switch {
		case c.whole() || c.home == p.leaf:
			s.raw, s.own = acceleratorPrefix+nv, true // the domain's own name
		default:
			s.raw = acceleratorPrefix + nv + "." + p.leaf.Name
			if c.home == nil {
				s.d.Vote = &NameVote{Tied: true}
			}
		}
		out = append(out, s)
		if !subs.builds(nodes, sub) {
			s.d.Nodes = nodes
			continue
		}
		bySub := map[string][]string{}
		for _, n := range nodes {
			if sub[n] != "" {
				bySub[sub[n]] = append(bySub[sub[n]], n)
			} else {
				out = append(out, alone(n, s.d, 1, TierNameAcceleratorSubDomain, nv, byNode))
			}
		}
		for _, r := range slices.Sorted(maps.Keys(bySub)) {
			out = append(out, &acceleratorSpec{parent: s.d, raw: acceleratorPrefix + nv + "." + r, count: len(bySub[r]), d: &Domain{
				Tier: 1, TierName: TierNameAcceleratorSubDomain, Nodes: bySub[r], NVLinkDomain: nv, NVLinkSubDomain: r,
				Source: nodesSource(bySub[r], byNode),
			}})
		}
	}
	for _, n := range p.bare {
		out = append(out, alone(n, p.leaf, tier, TierNameAccelerator, "", byNode))
	}
	return out
}

// alone is the spec of a domain below parent that holds node n alone, named after it: a node without an NVLink
// domain (or sub-domain) beside nodes that have one.
func alone(n string, parent *Domain, tier int, tierName, nvl string, byNode nodeIndex) *acceleratorSpec {
	return &acceleratorSpec{parent: parent, raw: n, node: n, count: 1, d: &Domain{
		Tier: tier, TierName: tierName, Nodes: []string{n}, NVLinkDomain: nvl, Source: byNode.source(n),
	}}
}

// problems says, once the domains below p's leaf have their names, which of its nodes stand apart: those
// without an NVLink domain (or sub-domain) beside nodes that have one, those whose sub-domains are not used,
// and those of a suspect part (see nvlinkClaims.suspect).
func (p *leafPlan) problems(claims map[string]*nvlinkClaims, subs subDomainPlan, sub map[string]string,
	byNode nodeIndex,
) []Problem {
	var out []Problem
	for _, s := range p.built {
		if s.parent != p.leaf || s.d.NVLinkDomain == "" {
			continue
		}
		nodes := p.parts[s.d.NVLinkDomain]
		out = append(out, claims[s.d.NVLinkDomain].suspect(p.leaf, s.d.Name, byNode)...)
		out = append(out, subs.partProblems(p.leaf, s, nodes, sub, p.built, byNode)...)
	}
	for _, s := range p.built {
		if s.node != "" && s.parent == p.leaf {
			out = append(out, Problem{Node: s.node, Source: byNode.source(s.node), Reason: fmt.Sprintf(
				"has no NVLink domain, while %d of the %d nodes of its leaf domain %q have one: it stands alone in accelerator domain %q, named after it, since a domain holds either nodes or domains; the others keep theirs",
				p.size-len(p.bare), p.size, p.leaf.Name, s.d.Name)})
		}
	}
	return out
}

// nameList joins names with commas, listing at most maxListedNodes and counting the rest.
func nameList(names []string) string {
	if len(names) <= maxListedNodes {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListedNodes], ", "), len(names)-maxListedNodes)
}
