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

// all returns the group's nodes, sorted.
func (g *nvlinkGroup) all() []string {
	var out []string
	for _, l := range g.leaves {
		out = append(out, g.nodes[l.Name]...)
	}
	slices.Sort(out)
	return out
}

// addAcceleratorDomains puts the nodes of every NVLink domain into accelerator domains below their leaves:
// the switch tree stays whole for every node, and NVLink refines it within a leaf. An NVLink domain whose
// nodes all sit in one leaf is one accelerator domain below that leaf. An NVLink domain that spans leaves (a
// multi-rack NVL72 whose racks hang off different leaves) is one accelerator domain per leaf it spans, each
// holding its part of the domain and recording the whole domain in NVLinkDomain: a job kept inside one of them
// is inside one leaf and one NVLink domain at once, and the leaf, spine and core above every node keep the
// tiers they have without NVLink (docs/aggregator.md says why this shape). When some node has an NVLink
// sub-domain (NodeEvidence.NVLinkSubDomain), the nodes of an accelerator domain whose nodes all have one sit in
// one accelerator sub-domain per sub-domain below it. When it adds any accelerator domain, it first moves
// every domain of t up one tier (two with sub-domains), so that accelerator domains (and sub-domains below
// them) are the lowest tiers everywhere and tiers still grow upward. leaves are the leaf domains of t.
//
// Volcano wants a HyperNode's members to be all nodes or all HyperNodes, so a leaf gets accelerator domains
// only when every one of its nodes has an NVLink domain; otherwise the leaf keeps its nodes directly and a
// Problem names the leaf and its nodes without one. A leaf none of whose nodes has an NVLink domain keeps them
// without a Problem. Accelerator domains are named in the order of their NVLink domains (and, for a domain
// that spans leaves, of its leaves), so their names do not depend on the order of the input.
func addAcceleratorDomains(t *Tree, leaves []*Domain, byNode map[string]NodeEvidence) []Problem {
	refused := map[string]bool{}
	var problems []Problem
	for _, l := range leaves {
		if p, mixed := mixedLeafProblem(l, byNode); mixed {
			problems = append(problems, p)
			refused[l.Name] = true
		}
	}
	groups := groupByNVLink(leaves, byNode)
	built := func(g *nvlinkGroup) bool {
		return slices.ContainsFunc(g.leaves, func(l *Domain) bool { return !refused[l.Name] })
	}
	if !slices.ContainsFunc(groups, built) {
		return problems
	}
	subTier := slices.ContainsFunc(groups, func(g *nvlinkGroup) bool {
		return built(g) && slices.ContainsFunc(g.all(), func(n string) bool { return byNode[n].NVLinkSubDomain != "" })
	})
	shift := 1
	if subTier {
		shift = 2
	}
	for _, d := range t.Domains {
		d.Tier += shift
	}
	for _, g := range groups {
		for _, l := range g.leaves {
			if !refused[l.Name] {
				problems = append(problems, addAcceleratorDomain(t, g, l, byNode, shift, subTier)...)
			}
		}
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

// addAcceleratorDomain adds, at tier tier below leaf l, the accelerator domain of g's nodes in l, and takes
// those nodes out of l. It is named after the NVLink domain alone when g sits in l only, and after the domain
// and the leaf, marked NVLinkPart, when g spans leaves (even where another leaf of g keeps its nodes directly). With subTier, its nodes go one level lower, into one accelerator
// sub-domain per NVLink sub-domain, when they all have one; a domain some of whose nodes have one and others
// none keeps them directly, and the Problem returned says so.
func addAcceleratorDomain(t *Tree, g *nvlinkGroup, l *Domain, byNode map[string]NodeEvidence, tier int, subTier bool) []Problem {
	nodes := g.nodes[l.Name]
	raw := acceleratorPrefix + g.domain
	if len(g.leaves) > 1 {
		raw += "." + l.Name
	}
	d := &Domain{
		Name:         freeName(t, raw),
		Tier:         tier,
		TierName:     TierNameAccelerator,
		Parent:       l.Name,
		NVLinkDomain: g.domain,
		NVLinkPart:   len(g.leaves) > 1,
		Source:       nodesSource(nodes, byNode),
	}
	_ = t.Add(d) // freeName returns a free name
	l.Children = append(l.Children, d.Name)
	slices.Sort(l.Children)
	taken := map[string]bool{}
	for _, n := range nodes {
		taken[n] = true
	}
	l.Nodes = slices.DeleteFunc(l.Nodes, func(n string) bool { return taken[n] })
	bySub := map[string][]string{}
	var bare []string
	for _, n := range nodes {
		if sub := byNode[n].NVLinkSubDomain; sub != "" {
			bySub[sub] = append(bySub[sub], n)
		} else {
			bare = append(bare, n)
		}
	}
	if !subTier || len(bySub) == 0 || len(bare) > 0 {
		d.Nodes = nodes
		if subTier && len(bySub) > 0 {
			return []Problem{{Node: bare[0], Source: byNode[bare[0]].Source, Reason: fmt.Sprintf(
				"NVLink domain %q gets no sub-domains in leaf domain %q: %d of its %d nodes there have no NVLink sub-domain (%s), and a domain holds either nodes or domains; its nodes stay directly in its accelerator domain %q",
				g.domain, l.Name, len(bare), len(nodes), nameList(bare), d.Name)}}
		}
		return nil
	}
	for _, sub := range slices.Sorted(maps.Keys(bySub)) {
		sd := &Domain{
			Name:            freeName(t, acceleratorPrefix+g.domain+"."+sub),
			Tier:            1,
			TierName:        TierNameAcceleratorSubDomain,
			Parent:          d.Name,
			Nodes:           bySub[sub],
			NVLinkDomain:    g.domain,
			NVLinkSubDomain: sub,
			Source:          nodesSource(bySub[sub], byNode),
		}
		_ = t.Add(sd)
		d.Children = append(d.Children, sd.Name)
	}
	slices.Sort(d.Children)
	return nil
}

// mixedLeafProblem reports a leaf where some nodes have an NVLink domain and others have none, as a problem
// of the first node without one. The bool is false when the leaf is not mixed.
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
