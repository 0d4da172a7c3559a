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

// addAcceleratorDomains puts the nodes of every NVLink domain into one accelerator domain, below the lowest
// switch domain that holds all its nodes: its leaf when it has one, else (a multi-rack NVL72 whose racks
// hang off different leaves) the lowest domain above all its leaves, where it stands beside those leaves and
// takes its nodes out of them (a leaf left empty goes, and so does a domain above it left empty). When some
// node has an NVLink sub-domain (NodeEvidence.NVLinkSubDomain), the nodes of an NVLink domain whose nodes all
// have one sit in one accelerator sub-domain per sub-domain below it. When it adds any accelerator domain, it
// first moves every domain of t up one tier (two with sub-domains), so that accelerator domains (and
// sub-domains below them) are the lowest tiers everywhere and tiers still grow upward. leaves are the leaf
// domains of t.
//
// Volcano wants a HyperNode's members to be all nodes or all HyperNodes, so an NVLink domain whose nodes all
// sit in one leaf gets its accelerator domain only when every node left in that leaf has an NVLink domain;
// otherwise the leaf keeps those nodes directly and a Problem names the leaf and its nodes without one. A leaf
// none of whose nodes has an NVLink domain keeps them without a Problem. Accelerator domains are named in the
// order of their NVLink domains, so their names do not depend on the order of the input.
func addAcceleratorDomains(t *Tree, leaves []*Domain, byNode map[string]NodeEvidence) []Problem {
	groups := groupByNVLink(leaves, byNode)
	spans := map[string]bool{} // nodes of NVLink domains that span leaves: they leave their leaves
	for _, g := range groups {
		if len(g.leaves) > 1 {
			for _, n := range g.all() {
				spans[n] = true
			}
		}
	}
	refused := map[string]bool{}
	var problems []Problem
	for _, l := range leaves {
		if p, mixed := mixedLeafProblem(l, byNode, spans); mixed {
			problems = append(problems, p)
			refused[l.Name] = true
		}
	}
	build := slices.DeleteFunc(groups, func(g *nvlinkGroup) bool { return len(g.leaves) == 1 && refused[g.leaves[0].Name] })
	if len(build) == 0 {
		return problems
	}
	subTier := slices.ContainsFunc(build, func(g *nvlinkGroup) bool {
		return slices.ContainsFunc(g.all(), func(n string) bool { return byNode[n].NVLinkSubDomain != "" })
	})
	shift := 1
	if subTier {
		shift = 2
	}
	for _, d := range t.Domains {
		d.Tier += shift
	}
	for _, g := range build {
		problems = append(problems, addAcceleratorDomain(t, g, byNode, shift, subTier)...)
	}
	for _, g := range build {
		for _, l := range g.leaves {
			pruneEmpty(t, l)
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

// addAcceleratorDomain adds g's accelerator domain, at tier tier, below the lowest domain that holds all its
// leaves, and takes its nodes out of those leaves. With subTier, its nodes go one level lower, into one
// accelerator sub-domain per NVLink sub-domain, when they all have one; a domain some of whose nodes have one
// and others none keeps them directly, and the Problem returned says so.
func addAcceleratorDomain(t *Tree, g *nvlinkGroup, byNode map[string]NodeEvidence, tier int, subTier bool) []Problem {
	parent := lowestCommonDomain(t, g.leaves)
	nodes := g.all()
	d := &Domain{
		Name:         freeName(t, acceleratorPrefix+g.domain),
		Tier:         tier,
		TierName:     TierNameAccelerator,
		Parent:       parent.Name,
		NVLinkDomain: g.domain,
		Source:       nodesSource(nodes, byNode),
	}
	_ = t.Add(d) // freeName returns a free name
	parent.Children = append(parent.Children, d.Name)
	slices.Sort(parent.Children)
	taken := map[string]bool{}
	for _, n := range nodes {
		taken[n] = true
	}
	for _, l := range g.leaves {
		l.Nodes = slices.DeleteFunc(l.Nodes, func(n string) bool { return taken[n] })
		if len(l.Nodes) > 0 {
			l.Source = nodesSource(l.Nodes, byNode)
		}
	}
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
				"NVLink domain %q gets no sub-domains: %d of its %d nodes have no NVLink sub-domain (%s), and a domain holds either nodes or domains; its nodes stay directly in its accelerator domain %q",
				g.domain, len(bare), len(nodes), nameList(bare), d.Name)}}
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

// lowestCommonDomain returns the lowest domain of t at or above every one of leaves (which share t's root).
func lowestCommonDomain(t *Tree, leaves []*Domain) *Domain {
	common := t.PathFrom(leaves[0].Name)
	for _, l := range leaves[1:] {
		above := map[string]bool{}
		for _, d := range t.PathFrom(l.Name) {
			above[d.Name] = true
		}
		common = slices.DeleteFunc(common, func(d *Domain) bool { return !above[d.Name] })
	}
	return common[0]
}

// pruneEmpty removes d from t when it holds neither nodes nor domains, and then every domain above it left
// empty in turn.
func pruneEmpty(t *Tree, d *Domain) {
	for d != nil && len(d.Nodes) == 0 && len(d.Children) == 0 && t.Domains[d.Name] == d {
		delete(t.Domains, d.Name)
		parent := t.Domains[d.Parent]
		if parent != nil {
			parent.Children = slices.DeleteFunc(parent.Children, func(c string) bool { return c == d.Name })
		}
		d = parent
	}
}

// mixedLeafProblem reports a leaf where some nodes have an NVLink domain that stays in the leaf and others
// have none; nodes in spans (of NVLink domains that span leaves) leave the leaf and do not count. It is given
// as a problem of the first node without one. The bool is false when the leaf is not mixed.
func mixedLeafProblem(l *Domain, byNode map[string]NodeEvidence, spans map[string]bool) (Problem, bool) {
	var bare []string
	staying := 0
	for _, n := range l.Nodes {
		switch {
		case byNode[n].NVLinkDomain == "":
			bare = append(bare, n)
		case !spans[n]:
			staying++
		}
	}
	if len(bare) == 0 || staying == 0 {
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
