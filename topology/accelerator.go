package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// acceleratorPrefix starts every accelerator domain's name ("nvl-" and the NVLink domain, see SafeName), which
// keeps it apart from names derived from switches; freeName settles any clash that is left.
const acceleratorPrefix = "nvl-"

// maxListedNodes is how many node names a Problem lists before it only counts the rest.
const maxListedNodes = 8

// nvlinkGroup is the nodes of one NVLink domain, by the leaf domain they sit in.
type nvlinkGroup struct {
	// domain is the NVLink domain.
	domain string
	// leaves are the leaf domains that hold its nodes, in Build's leaf order.
	leaves []*Domain
	// nodes maps a leaf's name to the group's nodes in that leaf, sorted.
	nodes map[string][]string
}

// addAcceleratorDomains puts the nodes of a leaf below one accelerator domain per NVLink domain and, when it
// adds any, first moves every domain of t up one tier, so that accelerator domains are tier 1 everywhere and
// tiers still grow upward. leaves are the leaf domains of t.
//
// Volcano wants a HyperNode's members to be all nodes or all HyperNodes, so a leaf gets accelerator domains
// only when every one of its nodes has an NVLink domain and none of those NVLink domains has nodes in
// another leaf (which no real fabric does: it is bad evidence). Otherwise the leaf keeps its nodes directly
// and a Problem names the leaf, the NVLink domain and the nodes. A leaf none of whose nodes has an NVLink
// domain keeps them without a Problem. Accelerator domains are named in the order of their NVLink domains,
// so their names do not depend on the order of the input.
func addAcceleratorDomains(t *Tree, leaves []*Domain, byNode map[string]NodeEvidence) []Problem {
	groups := groupByNVLink(leaves, byNode)
	refused := map[string]bool{}
	var problems []Problem
	for _, g := range groups {
		if len(g.leaves) > 1 {
			problems = append(problems, spanProblem(g, byNode))
			for _, l := range g.leaves {
				refused[l.Name] = true
			}
		}
	}
	for _, l := range leaves {
		if p, mixed := mixedLeafProblem(l, byNode); mixed {
			problems = append(problems, p)
			refused[l.Name] = true
		}
	}
	build := slices.DeleteFunc(groups, func(g *nvlinkGroup) bool { return refused[g.leaves[0].Name] })
	if len(build) == 0 {
		return problems
	}
	for _, d := range t.Domains {
		d.Tier++
	}
	for _, g := range build {
		addAcceleratorDomain(t, g, byNode)
	}
	return problems
}

// groupByNVLink gathers the nodes of leaves that have an NVLink domain, one group per NVLink domain, sorted by it.
func groupByNVLink(leaves []*Domain, byNode map[string]NodeEvidence) []*nvlinkGroup {
	byDomain := map[string]*nvlinkGroup{}
	for _, l := range leaves {
		for _, n := range l.Nodes {
			nv := byNode[n].NVLinkDomain
			if nv == "" {
				continue
			}
			g := byDomain[nv]
			if g == nil {
				g = &nvlinkGroup{domain: nv, nodes: map[string][]string{}}
				byDomain[nv] = g
			}
			if len(g.nodes[l.Name]) == 0 {
				g.leaves = append(g.leaves, l)
			}
			g.nodes[l.Name] = append(g.nodes[l.Name], n)
		}
	}
	return slices.SortedFunc(maps.Values(byDomain), func(a, b *nvlinkGroup) int { return strings.Compare(a.domain, b.domain) })
}

// addAcceleratorDomain adds g's accelerator domain below its only leaf. Every node of that leaf has an NVLink
// domain, so once all its groups are added the leaf holds domains only: its nodes are taken from it here.
func addAcceleratorDomain(t *Tree, g *nvlinkGroup, byNode map[string]NodeEvidence) {
	leaf := g.leaves[0]
	d := &Domain{
		Name:         freeName(t, acceleratorPrefix+g.domain),
		Tier:         1,
		TierName:     TierNameAccelerator,
		Parent:       leaf.Name,
		Nodes:        g.nodes[leaf.Name],
		NVLinkDomain: g.domain,
		Source:       nodesSource(g.nodes[leaf.Name], byNode),
	}
	_ = t.Add(d) // freeName returns a free name
	leaf.Children = append(leaf.Children, d.Name)
	slices.Sort(leaf.Children)
	leaf.Nodes = nil
}

// spanProblem reports an NVLink domain whose nodes sit in more than one leaf; it is given as a problem of the
// domain's first node.
func spanProblem(g *nvlinkGroup, byNode map[string]NodeEvidence) Problem {
	parts := make([]string, 0, len(g.leaves))
	for _, l := range g.leaves {
		parts = append(parts, fmt.Sprintf("%q (%s)", l.Name, nameList(g.nodes[l.Name])))
	}
	first := g.nodes[g.leaves[0].Name][0]
	return Problem{Node: first, Source: byNode[first].Source, Reason: fmt.Sprintf(
		"NVLink domain %q spans leaf domains %s; no accelerator domain is built for it, and those leaves keep their nodes directly",
		g.domain, strings.Join(parts, ", "))}
}

// mixedLeafProblem reports a leaf where some nodes have an NVLink domain and others have none; it is given as
// a problem of the first node without one. The bool is false when the leaf is not mixed.
func mixedLeafProblem(l *Domain, byNode map[string]NodeEvidence) (Problem, bool) {
	var bare []string
	for _, n := range l.Nodes {
		if byNode[n].NVLinkDomain == "" {
			bare = append(bare, n)
		}
	}
	if len(bare) == 0 || len(bare) == len(l.Nodes) {
		return Problem{}, false
	}
	return Problem{Node: bare[0], Source: byNode[bare[0]].Source, Reason: fmt.Sprintf(
		"leaf domain %q gets no accelerator domains: %d of its %d nodes have no NVLink domain (%s), and a domain holds either nodes or domains; its nodes stay directly in it",
		l.Name, len(bare), len(l.Nodes), nameList(bare))}, true
}

// nameList joins names with commas, listing at most maxListedNodes and counting the rest.
func nameList(names []string) string {
	if len(names) <= maxListedNodes {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListedNodes], ", "), len(names)-maxListedNodes)
}
