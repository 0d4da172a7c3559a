package topology

import (
	"fmt"
	"slices"
)

// subDomainPlan says whether the tree gets an accelerator sub-domain tier: when at least half of the nodes in
// accelerator domains (with an NVLink domain) have a sub-domain, so that a few nodes never add or remove a tier.
type subDomainPlan struct {
	// tier is set when sub-domains are built.
	tier bool
	// with are the nodes in accelerator domains that have a sub-domain, sorted; of all of them.
	with []string
	all  int
}

// mostHaveSub reports whether at least half of nodes, and at least one, have a sub-domain.
func mostHaveSub(nodes []string, sub map[string]string) bool {
	with := 0
	for _, n := range nodes {
		if sub[n] != "" {
			with++
		}
	}
	return with > 0 && 2*with >= len(nodes)
}

// planSubDomains decides the sub-domain tier over the parts of the leaves that get accelerator domains.
func planSubDomains(plans []*leafPlan, sub map[string]string) subDomainPlan {
	var s subDomainPlan
	for _, p := range plans {
		if !p.build {
			continue
		}
		for _, nodes := range p.parts {
			s.all += len(nodes)
			for _, n := range nodes {
				if sub[n] != "" {
					s.with = append(s.with, n)
				}
			}
		}
	}
	slices.Sort(s.with)
	s.tier = len(s.with) > 0 && 2*len(s.with) >= s.all
	return s
}

// builds reports whether the accelerator domain of nodes holds sub-domains: the tree has the tier and at least
// half of nodes have a sub-domain.
func (s subDomainPlan) builds(nodes []string, sub map[string]string) bool {
	return s.tier && mostHaveSub(nodes, sub)
}

// unusedProblem says, when the tree has no sub-domain tier though some nodes gave a sub-domain, that theirs
// are not used: a problem of the first of them.
func (s subDomainPlan) unusedProblem(byNode nodeIndex) []Problem {
	if s.tier || len(s.with) == 0 {
		return nil
	}
	return []Problem{{Node: s.with[0], Source: byNode.source(s.with[0]), Reason: fmt.Sprintf(
		"NVLink sub-domains are not used: %d of the %d nodes in accelerator domains give one (%s), fewer than half, so the tree has no sub-domain tier; they stay directly in their accelerator domains",
		len(s.with), s.all, nameList(s.with))}}
}

// partProblems says which nodes of the accelerator domain of spec part (nodes, below leaf l) stand apart at the
// sub-domain tier: each node without a sub-domain that stands alone in one named after it, or, when most of
// its nodes have none, the nodes whose sub-domains are not used. specs are the domains below l.
func (s subDomainPlan) partProblems(l *Domain, part *acceleratorSpec, nodes []string, sub map[string]string,
	specs []*acceleratorSpec, byNode nodeIndex,
) []Problem {
	if !s.tier {
		return nil
	}
	var with []string
	for _, n := range nodes {
		if sub[n] != "" {
			with = append(with, n)
		}
	}
	if len(with) == 0 {
		return nil
	}
	var out []Problem
	if len(part.d.Children) == 0 {
		return []Problem{{Node: with[0], Source: byNode.source(with[0]), Reason: fmt.Sprintf(
			"NVLink domain %q gets no sub-domains in leaf domain %q: %d of its %d nodes there have no NVLink sub-domain, more than half, and a domain holds either nodes or domains; the sub-domains of the others (%s) are not used, and its nodes stay directly in accelerator domain %q",
			part.d.NVLinkDomain, l.Name, len(nodes)-len(with), len(nodes), nameList(with), part.d.Name)}}
	}
	for _, c := range specs {
		if c.node != "" && c.parent == part.d {
			out = append(out, Problem{Node: c.node, Source: byNode.source(c.node), Reason: fmt.Sprintf(
				"has no NVLink sub-domain, while %d of the %d nodes of NVLink domain %q in leaf domain %q have one: it stands alone in accelerator sub-domain %q, named after it, since a domain holds either nodes or domains; the others keep theirs",
				len(with), len(nodes), part.d.NVLinkDomain, l.Name, c.d.Name)})
		}
	}
	return out
}
