package topology

import (
	"fmt"
	"slices"
	"strings"
)

// switchGraph is the switch side of the fabric: names, cables between switches and each switch's tier.
type switchGraph struct {
	// names maps switch ID to its name, as nameSwitches chose it; a switch without one is named after its ID.
	names map[string]string
	// adj lists each switch's switch neighbours.
	adj map[string][]string
	// source maps switch ID to the smallest source that named it in a switch link.
	source map[string]string
	// storageOnly holds switches that nodes reach only through storage links.
	storageOnly map[string]bool
	// cascaded holds the leaf switches that have other leaves cabled below them (see cascades); each also
	// stands for a tier-2 domain above its own hosts' leaf.
	cascaded map[string]bool
}

func newSwitchGraph(byNode map[string]NodeEvidence, edges []SwitchEdge) (*switchGraph, []Problem) {
	g := &switchGraph{names: map[string]string{}, adj: map[string][]string{}, source: map[string]string{}, storageOnly: map[string]bool{}}
	compute := map[string]bool{}
	for _, e := range byNode {
		for _, l := range e.Links {
			if l.Storage {
				g.storageOnly[l.SwitchID] = true
			} else {
				compute[l.SwitchID] = true
			}
		}
	}
	for id := range compute {
		delete(g.storageOnly, id)
	}
	var problems []Problem
	for i, e := range edges {
		if !e.usable() {
			problems = append(problems, Problem{Source: e.Source, Reason: fmt.Sprintf("switch link %d (%q–%q) has an empty switch identifier", i, e.A, e.B)})
			continue
		}
		if e.A == e.B || g.storageOnly[e.A] || g.storageOnly[e.B] {
			continue
		}
		g.adj[e.A] = append(g.adj[e.A], e.B)
		g.adj[e.B] = append(g.adj[e.B], e.A)
		for _, s := range []string{e.A, e.B} {
			g.source[s] = smallerSource(g.source[s], e.Source)
		}
	}
	for s, n := range g.adj {
		slices.Sort(n)
		g.adj[s] = slices.Compact(n)
	}
	return g, problems
}

// usable reports whether Build can use e: both ends are known.
func (e SwitchEdge) usable() bool { return e.A != "" && e.B != "" }

// smallerSource returns src when cur is empty or src sorts before it, else cur: a domain or switch keeps the
// smallest source among those that gave evidence for it. Evidence that names no source changes nothing, so
// the result does not depend on the order the evidence came in.
func smallerSource(cur, src string) string {
	if src != "" && (cur == "" || src < cur) {
		return src
	}
	return cur
}

// strayLinks are the compute switches of a node cabled to switches of different domains: those of the
// domain it joins, and the others, whose links are rejected.
type strayLinks struct {
	kept, stray []string
}

// groupLeaves groups the nodes joined by shared compute switches into tier-1 domains, not yet named nor added
// to a tree, ordered by their smallest switch. It also returns the nodes that reach no compute switch, and,
// by node, the links of each node cabled to switches of different domains (see joinedSwitches).
func (g *switchGraph) groupLeaves(byNode map[string]NodeEvidence) ([]*Domain, []string, map[string]strayLinks) {
	links := make(map[string][]string, len(byNode))
	var unplaced []string
	for n, e := range byNode {
		if ids := computeSwitches(e); len(ids) > 0 {
			links[n] = ids
		} else {
			unplaced = append(unplaced, n)
		}
	}
	slices.Sort(unplaced)
	uf := joinedSwitches(links)
	strays := map[string]strayLinks{}
	for _, n := range sortedKeys(links) {
		kept, stray := majorityGroup(uf, links[n])
		for _, id := range kept {
			uf.union("n\x00"+n, "s\x00"+id)
		}
		if len(stray) > 0 {
			strays[n] = strayLinks{kept: kept, stray: stray}
		}
	}

	var leaves []*Domain
	for _, keys := range uf.sets() {
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "n\x00") }) {
			continue // switches whose only hosts were strays kept elsewhere
		}
		d := &Domain{Tier: 1, TierName: TierName(1)}
		for _, k := range keys {
			kind, id, _ := strings.Cut(k, "\x00")
			if kind == "s" {
				d.Switches = append(d.Switches, id)
				continue
			}
			d.Nodes = append(d.Nodes, id)
		}
		slices.Sort(d.Nodes)
		slices.Sort(d.Switches)
		d.Source = nodesSource(d.Nodes, byNode)
		leaves = append(leaves, d)
	}
	slices.SortFunc(leaves, func(a, b *Domain) int { return strings.Compare(a.Switches[0], b.Switches[0]) })
	return leaves, unplaced, strays
}

// nodesSource is the smallest source of the evidence of nodes: the source of a domain that holds them.
func nodesSource(nodes []string, byNode map[string]NodeEvidence) string {
	src := ""
	for _, n := range nodes {
		src = smallerSource(src, byNode[n].Source)
	}
	return src
}

// strayProblems reports, in node order, each node cabled to switches of different domains; it is said once
// the switches have their names.
func (g *switchGraph) strayProblems(strays map[string]strayLinks, byNode map[string]NodeEvidence) []Problem {
	var problems []Problem
	for _, n := range sortedKeys(strays) {
		s := strays[n]
		problems = append(problems, Problem{Node: n, Source: byNode[n].Source, Reason: fmt.Sprintf(
			"cabled to switches of different domains: kept with %s (most of its links), not with %s, whose hosts it hardly shares; check those cables",
			g.labels(s.kept), g.labels(s.stray))})
	}
	return problems
}

// computeSwitches returns the compute switches e links to, each once, in link order.
func computeSwitches(e NodeEvidence) []string {
	var ids []string
	for _, l := range e.Links {
		if !l.Storage && !slices.Contains(ids, l.SwitchID) {
			ids = append(ids, l.SwitchID)
		}
	}
	return ids
}

// joinedSwitches joins compute switches into the groups that form one leaf domain: two switches join when
// more than half of the hosts of the one with fewer hosts reach both. Rail leaves of a scalable unit share
// (nearly) all their hosts, as do the two switches of a dual-homed pair, so they join even with some cables
// down; a host cabled by mistake to a leaf of another unit shares too few hosts with it to join the two.
func joinedSwitches(links map[string][]string) *unionFind {
	hosts := map[string]int{}
	shared := map[[2]string]int{}
	for _, ids := range links {
		for i, a := range ids {
			hosts[a]++
			for _, b := range ids[i+1:] {
				shared[[2]string{min(a, b), max(a, b)}]++
			}
		}
	}
	uf := newUnionFind()
	for id := range hosts {
		uf.add("s\x00" + id)
	}
	for pair, n := range shared {
		if 2*n > min(hosts[pair[0]], hosts[pair[1]]) {
			uf.union("s\x00"+pair[0], "s\x00"+pair[1])
		}
	}
	return uf
}

// majorityGroup splits ids into the switches of the group that holds most of them (the first link's group on
// a tie) and the others.
func majorityGroup(uf *unionFind, ids []string) (kept, stray []string) {
	count := map[string]int{}
	best := ""
	for _, id := range ids {
		r := uf.find("s\x00" + id)
		count[r]++
		if best == "" || count[r] > count[best] {
			best = r
		}
	}
	for _, id := range ids {
		if uf.find("s\x00"+id) == best {
			kept = append(kept, id)
		} else {
			stray = append(stray, id)
		}
	}
	return kept, stray
}

// label names a switch for a message: its name and identifier, or the identifier alone.
func (g *switchGraph) label(id string) string {
	if n := g.names[id]; n != "" {
		return n + " (" + id + ")"
	}
	return id
}

func (g *switchGraph) labels(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = g.label(id)
	}
	return strings.Join(out, ", ")
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// addDomains names ds in a stable order (by smallest switch) and adds them to t; no domain takes the root's name.
func (g *switchGraph) addDomains(t *Tree, ds []*Domain, rootName string) []*Domain {
	slices.SortFunc(ds, func(a, b *Domain) int { return strings.Compare(a.Switches[0], b.Switches[0]) })
	for _, d := range ds {
		d.Name = g.domainName(t, d.Switches, d.Tier, rootName)
		_ = t.Add(d) // domainName returns a free name
	}
	return ds
}

// layers gives every switch reachable from the leaves its tier: 1 for the leaves' switches, then one more
// per hop away from them, by breadth-first search over the switch links. The switches of a leaf that has
// cascaded leaves below it (see cascades) take tier 2 instead, and the search goes on from there, so that
// the switches above them count from the tier their hosts meet the cascaded hosts at.
func (g *switchGraph) layers(leaves []*Domain) map[string]int {
	layer := g.distances(leaves, nil)
	raised := g.cascades(leaves, layer)
	if len(raised) == 0 {
		return layer
	}
	g.cascaded = raised
	return g.distances(leaves, raised)
}

// distances is the breadth-first search of layers: the leaves' switches start at 1, those in raised at 2.
func (g *switchGraph) distances(leaves []*Domain, raised map[string]bool) map[string]int {
	layer := map[string]int{}
	var queue, later []string
	for _, d := range leaves {
		for _, s := range d.Switches {
			if raised[s] {
				layer[s] = 2
				later = append(later, s)
				continue
			}
			layer[s] = 1
			queue = append(queue, s)
		}
	}
	queue = append(queue, later...) // every tier-1 switch before the tier-2 ones: the search stays in order
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range g.adj[s] {
			if _, seen := layer[n]; !seen {
				layer[n] = layer[s] + 1
				queue = append(queue, n)
			}
		}
	}
	return layer
}

// cascades finds the leaves that hang below another leaf: a leaf whose switches have no link to a switch
// above the leaves (layer being the plain distances), cabled to a leaf whose switches do, as a blade or
// top-of-rack switch below an aggregation switch that has hosts of its own. The upper leaf's switch is the
// nearest one its hosts share with the cascaded hosts, so it stands, at tier 2, for the upper leaf and the
// leaves below it. It returns the upper leaves' switches. Two leaves cabled to each other that both have
// uplinks (or neither has) are peers, as an MLAG pair is, and nest nothing.
func (g *switchGraph) cascades(leaves []*Domain, layer map[string]int) map[string]bool {
	leafOf := map[string]*Domain{}
	for _, d := range leaves {
		for _, s := range d.Switches {
			leafOf[s] = d
		}
	}
	uplinked := func(d *Domain) bool {
		for _, s := range d.Switches {
			for _, n := range g.adj[s] {
				if layer[n] >= 2 {
					return true
				}
			}
		}
		return false
	}
	raised := map[string]bool{}
	for _, d := range leaves {
		if uplinked(d) {
			continue
		}
		for _, s := range d.Switches {
			for _, n := range g.adj[s] {
				if up := leafOf[n]; up != nil && up != d && uplinked(up) {
					for _, u := range up.Switches {
						raised[u] = true
					}
				}
			}
		}
	}
	return raised
}

// stackTiers builds the tiers above the leaves, layer being g.layers(leaves): at each tier, the domains whose switches reach a common
// switch of the next tier are joined under a new domain standing for those switches. It returns the
// domains left without a parent.
func (g *switchGraph) stackTiers(t *Tree, leaves []*Domain, layer map[string]int, rootName string) []*Domain {
	frontier := leaves
	for tier := 1; ; tier++ {
		uf := newUnionFind()
		for _, d := range frontier {
			for _, s := range d.Switches {
				if layer[s] == tier+1 {
					uf.union("d\x00"+d.Name, "s\x00"+s) // a cascaded leaf's hosts join the tier above them
				}
				for _, n := range g.adj[s] {
					if layer[n] == tier+1 {
						uf.union("d\x00"+d.Name, "s\x00"+n)
					}
				}
			}
		}
		sets := uf.sets()
		if len(sets) == 0 {
			return frontier
		}
		var next, joined []*Domain
		grouped := map[string]bool{}
		for _, keys := range sets {
			d := &Domain{Tier: tier + 1, TierName: TierName(tier + 1)}
			for _, k := range keys {
				kind, id, _ := strings.Cut(k, "\x00")
				if kind == "s" {
					d.Switches = append(d.Switches, id)
					d.Source = smallerSource(d.Source, g.source[id])
				} else {
					d.Children = append(d.Children, id)
					grouped[id] = true
				}
			}
			slices.Sort(d.Switches)
			slices.Sort(d.Children)
			joined = append(joined, d)
		}
		for _, d := range g.addDomains(t, joined, rootName) {
			for _, c := range d.Children {
				t.Domains[c].Parent = d.Name
			}
			next = append(next, d)
		}
		for _, d := range frontier {
			if !grouped[d.Name] {
				next = append(next, d) // nothing above it: it waits for the root
			}
		}
		frontier = next
	}
}
