package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// switchGraph is the switch side of the fabric: names, cables between switches and each switch's tier.
type switchGraph struct {
	// names maps switch ID to its name, as nameSwitches chose it; a switch without one is named after its ID.
	names map[string]string
	// num numbers the switches the graph knows (those of the switch links, then the leaves', see number): the
	// passes over every cable read numbers, not maps of switch IDs, which grew slower than the fabric. ids
	// holds each number's switch ID, adj its switch neighbours (each once, by number), source the smallest
	// source that named it in a switch link.
	num    map[string]int32
	ids    []string
	adj    [][]int32
	source []string
	// last holds, for each end of a cable, the switch number looked up there most recently: the cables of a
	// switch mostly come together.
	last [2]struct {
		id  string
		num int32
	}
	// storageOnly holds switches that nodes reach only through storage links.
	storageOnly map[string]bool
	// cascaded holds the leaf switches that have other leaves cabled below them (see cascadeParents); each
	// also stands for a domain above its own hosts' leaf.
	cascaded map[string]bool
	// up lists each switch's neighbours that stand above it (see layers), and layer each switch's tier (0:
	// none), by number.
	up    [][]int32
	layer []int32
	// votes is each switch's name vote, as nameSwitches held it (see domainName).
	votes map[string]*switchVote
	// seen and round are domainVote's marks of the nodes counted (see distinct), a mark per node sorted by name.
	seen  []uint32
	round uint32
}

func newSwitchGraph(byNode nodeIndex, edges []SwitchEdge) (*switchGraph, []Problem) {
	g := &switchGraph{names: map[string]string{}, num: map[string]int32{}, storageOnly: map[string]bool{}}
	if len(byNode.storage) > 0 { // storage links are few: the compute links are read again only when there are some
		maps.Copy(g.storageOnly, byNode.storage)
		for _, e := range byNode.list {
			for _, l := range e.Links {
				if !l.Storage {
					delete(g.storageOnly, l.SwitchID)
				}
			}
		}
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
		a, b := g.number(e.A, 0), g.number(e.B, 1)
		g.adj[a] = append(g.adj[a], b)
		g.adj[b] = append(g.adj[b], a)
		g.source[a] = smallerSource(g.source[a], e.Source)
		g.source[b] = smallerSource(g.source[b], e.Source)
	}
	for s, n := range g.adj {
		slices.Sort(n)
		g.adj[s] = slices.Compact(n)
	}
	return g, problems
}

// number returns switch id's number, numbering it when it is new; end (0 or 1) is the end of a cable it is
// looked up for, whose last switch is compared first.
func (g *switchGraph) number(id string, end int) int32 {
	last := &g.last[end]
	if last.id == id && id != "" {
		return last.num
	}
	i, ok := g.num[id]
	if !ok {
		i = int32(len(g.ids))
		g.num[id] = i
		g.ids = append(g.ids, id)
		g.adj = append(g.adj, nil)
		g.source = append(g.source, "")
	}
	last.id, last.num = id, i
	return i
}

// sourceOf is the smallest source that named switch id in a switch link; "" when none did.
func (g *switchGraph) sourceOf(id string) string {
	if i, ok := g.num[id]; ok {
		return g.source[i]
	}
	return ""
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

// nodesSource is the smallest source of the evidence of nodes: the source of a domain that holds them.
func nodesSource(nodes []string, byNode nodeIndex) string {
	src := ""
	for _, n := range nodes {
		src = smallerSource(src, byNode.source(n))
	}
	return src
}

// strayProblems reports, in node order, each node cabled to switches of different domains; it is said once
// the switches have their names.
func (g *switchGraph) strayProblems(strays map[string]strayLinks, byNode nodeIndex) []Problem {
	var problems []Problem
	for _, n := range sortedKeys(strays) {
		s := strays[n]
		problems = append(problems, Problem{Node: n, Source: byNode.source(n), Reason: fmt.Sprintf(
			"cabled to switches of different domains: kept with %s (most of its links), not with %s, whose hosts it hardly shares; check those cables",
			g.labels(s.kept), g.labels(s.stray))})
	}
	return problems
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
		d.Name, d.Vote = g.domainName(t, d.Switches, d.Tier, rootName)
		_ = t.Add(d) // domainName returns a free name
	}
	return ds
}

// layers gives every switch reachable from the leaves its tier, and records in g.up which of each switch's
// neighbours stand above it. In a fat tree, a leaf's switches are tier 1 and every other switch one more than
// its distance from them (breadth-first search over the switch links). Leaves may also hang below other
// leaves (cascades: a blade or top-of-rack switch with hosts cabled below a switch that has hosts too, at any
// depth; see cascadeParents): a leaf with cascaded leaves below it stands, with its switches, at one tier more
// than the highest of them, because its hosts meet theirs at its switches; and every switch above the leaves
// stands one tier above the highest switch below it. It returns the tiers and a Problem for each part of the
// switch graph that is not a tree of cascades, to be said once the switches have their names.
func (g *switchGraph) layers(leaves []*Domain) (map[string]int, func() []Problem) {
	for _, d := range leaves {
		for _, s := range d.Switches {
			g.number(s, 0) // a leaf switch without switch links has a number too
		}
	}
	plain := g.distances(leaves)
	leafOf := make([]*Domain, len(g.ids))
	for _, d := range leaves {
		for _, s := range d.Switches {
			leafOf[g.num[s]] = d
		}
	}
	parent, problems := g.cascadeParents(leaves, plain, leafOf)
	g.up = make([][]int32, len(g.ids))
	for s, ns := range g.adj {
		ps, ds := plain[s], leafOf[s]
		for _, n := range ns {
			above := plain[n] > ps // a switch farther from the hosts, as in any fat tree
			if dn := leafOf[n]; ds != nil && dn != nil {
				above = parent[ds] == dn // leaf to leaf: only the leaf it hangs below
			}
			if above {
				g.up[s] = append(g.up[s], n)
			}
		}
	}
	if len(parent) == 0 {
		g.layer = plain
		return g.layerMap(), problems
	}
	height := map[*Domain]int32{}
	for d := range parent {
		for child, up := d, parent[d]; up != nil; child, up = up, parent[up] {
			height[up] = max(height[up], height[child]+1)
		}
	}
	g.cascaded = map[string]bool{}
	layer := make([]int32, len(g.ids)) // 0: no tier
	for _, d := range leaves {
		for _, s := range d.Switches {
			layer[g.num[s]] = 1 + height[d]
			if height[d] > 0 {
				g.cascaded[s] = true
			}
		}
	}
	var above []int32
	for s, p := range plain {
		if p > 0 && leafOf[s] == nil {
			above = append(above, int32(s))
		}
	}
	slices.SortFunc(above, func(a, b int32) int { return cmp.Or(int(plain[a]-plain[b]), strings.Compare(g.ids[a], g.ids[b])) })
	for _, s := range above {
		for _, n := range g.adj[s] {
			if slices.Contains(g.up[n], s) {
				layer[s] = max(layer[s], layer[n]+1)
			}
		}
	}
	g.layer = layer
	return g.layerMap(), problems
}

// layerMap is g.layer by switch ID, for the switches that have a tier.
func (g *switchGraph) layerMap() map[string]int {
	out := make(map[string]int, len(g.layer))
	for s, l := range g.layer {
		if l > 0 {
			out[g.ids[s]] = int(l)
		}
	}
	return out
}

// distances is the plain tier of every switch reachable from the leaves, by number: 1 for the leaves'
// switches, then one more per hop away from them; 0 for a switch not reached.
func (g *switchGraph) distances(leaves []*Domain) []int32 {
	layer := make([]int32, len(g.ids))
	var queue []int32
	for _, d := range leaves {
		for _, s := range d.Switches {
			i := g.num[s]
			layer[i] = 1
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range g.adj[s] {
			if layer[n] == 0 {
				layer[n] = layer[s] + 1
				queue = append(queue, n)
			}
		}
	}
	return layer
}

// cascadeParents finds the leaves that hang below another leaf, and which: leaves cabled to each other form
// cascades, whose top is a leaf with an uplink (a link to a switch above the leaves, plain being the plain
// distances); each other leaf of the cascade hangs below the neighbouring leaf one cable closer to that top,
// at any depth (a blade below a blade below an aggregation switch). A group of cabled leaves none of which has
// an uplink hangs below the one leaf cabled to the most others (a top switch with hosts and blades below it);
// when no leaf stands out (two peers, or a ring), they nest nothing, as two leaves that both have uplinks (an
// MLAG pair) nest nothing. A leaf cabled below two leaves equally close to the top is not a tree: it hangs
// below the first (by switch) and a Problem says so, as does a group whose top cannot be told.
func (g *switchGraph) cascadeParents(leaves []*Domain, plain []int32, leafOf []*Domain) (map[*Domain]*Domain, func() []Problem) {
	neighbours := map[*Domain][]*Domain{}
	uplinked := map[*Domain]bool{}
	for _, d := range leaves {
		for _, s := range d.Switches {
			for _, n := range g.adj[g.num[s]] {
				switch up := leafOf[n]; {
				case up == nil && plain[n] >= 2:
					uplinked[d] = true
				case up != nil && up != d && !slices.Contains(neighbours[d], up):
					neighbours[d] = append(neighbours[d], up)
				}
			}
		}
	}
	dist := map[*Domain]int{}
	var queue []*Domain
	for _, d := range leaves {
		if uplinked[d] {
			dist[d] = 0
			queue = append(queue, d)
		}
	}
	var problems []func() Problem
	// Groups of cabled leaves without any uplink: the leaf cabled to the most others is their top.
	seen := map[*Domain]bool{}
	for _, d := range leaves {
		if seen[d] || len(neighbours[d]) == 0 {
			continue
		}
		group := leafGroup(d, neighbours)
		for _, m := range group {
			seen[m] = true
		}
		if slices.ContainsFunc(group, func(m *Domain) bool { return uplinked[m] }) {
			continue // its top is the leaf with the uplink
		}
		slices.SortFunc(group, func(a, b *Domain) int {
			return cmp.Or(len(neighbours[b])-len(neighbours[a]), strings.Compare(a.Switches[0], b.Switches[0]))
		})
		switch {
		case len(group) > 2 && len(neighbours[group[0]]) > len(neighbours[group[1]]):
			dist[group[0]] = 0
			queue = append(queue, group[0])
		case len(group) > 2:
			problems = append(problems, func() Problem {
				return Problem{Source: cmp.Or(g.sourceOf(group[0].Switches[0]), "switch links"), Reason: fmt.Sprintf(
					"leaves %s are cabled to each other, none has an uplink and none is cabled to more of them than the others: no cascade is nested, their hosts meet at the top",
					g.labels(leafSwitches(group)))}
			})
		}
	}
	parent := map[*Domain]*Domain{}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, n := range neighbours[d] {
			if _, reached := dist[n]; reached {
				continue
			}
			dist[n] = dist[d] + 1
			queue = append(queue, n)
		}
	}
	for _, d := range leaves {
		k, reached := dist[d]
		if !reached || k == 0 {
			continue
		}
		var ups []*Domain
		for _, n := range neighbours[d] {
			if k2, ok := dist[n]; ok && k2 == k-1 {
				ups = append(ups, n)
			}
		}
		slices.SortFunc(ups, func(a, b *Domain) int { return strings.Compare(a.Switches[0], b.Switches[0]) })
		parent[d] = ups[0]
		if len(ups) > 1 {
			problems = append(problems, func() Problem {
				return Problem{Source: cmp.Or(g.sourceOf(d.Switches[0]), "switch links"), Reason: fmt.Sprintf(
					"leaf %s is cabled below several leaves (%s): the cascade is not a tree; it is nested below %s",
					g.labels(d.Switches), g.labels(leafSwitches(ups)), g.labels(ups[0].Switches))}
			})
		}
	}
	return parent, func() []Problem {
		out := make([]Problem, len(problems))
		for i, p := range problems {
			out[i] = p()
		}
		return out
	}
}

// leafGroup returns the leaves cabled to d, directly or through other leaves, d included.
func leafGroup(d *Domain, neighbours map[*Domain][]*Domain) []*Domain {
	group := []*Domain{d}
	in := map[*Domain]bool{d: true}
	for i := 0; i < len(group); i++ {
		for _, n := range neighbours[group[i]] {
			if !in[n] {
				in[n] = true
				group = append(group, n)
			}
		}
	}
	return group
}

// leafSwitches returns the first switch of each of ds.
func leafSwitches(ds []*Domain) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Switches[0]
	}
	return out
}

// stackTiers builds the tiers above the leaves, layer being g.layers(leaves): at each tier, the domains whose
// switches are, or reach upward (g.up), a common switch of the next tier are joined under a new domain
// standing for those switches; a domain whose switches reach only higher tiers waits for them. It returns
// the domains left without a parent.
func (g *switchGraph) stackTiers(t *Tree, leaves []*Domain, layer map[string]int, rootName string) []*Domain {
	top := 0
	for _, l := range layer {
		top = max(top, l)
	}
	tierOf := func(s int32) int { return int(g.layer[s]) }
	frontier := leaves
	var ups []int32 // the switches of the next tier a domain is, or reaches: each joined once
	for tier := 1; tier < top; tier++ {
		uf := newUnionFind()
		for _, d := range frontier {
			ups = ups[:0]
			for _, id := range d.Switches {
				s := g.num[id]
				if tierOf(s) == tier+1 {
					ups = append(ups, s) // a cascaded leaf's hosts join the tier above them
				}
				for _, n := range g.up[s] {
					if tierOf(n) == tier+1 {
						ups = append(ups, n)
					}
				}
			}
			slices.Sort(ups)
			for _, s := range slices.Compact(ups) {
				uf.union(ufKey{ufDomain, d.Name}, ufKey{ufSwitch, g.ids[s]})
			}
		}
		sets := uf.sets()
		if len(sets) == 0 {
			continue
		}
		var next, joined []*Domain
		grouped := map[string]bool{}
		for _, keys := range sets {
			d := &Domain{Tier: tier + 1, TierName: TierName(tier + 1)}
			for _, k := range keys {
				if k.kind == ufSwitch {
					d.Switches = append(d.Switches, k.id)
					d.Source = smallerSource(d.Source, g.sourceOf(k.id))
				} else {
					d.Children = append(d.Children, k.id)
					grouped[k.id] = true
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
				next = append(next, d) // nothing above it at this tier: it waits for a higher one, or the root
			}
		}
		frontier = next
	}
	return frontier
}
