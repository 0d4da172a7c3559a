package topology

import (
	"sort"
	"strings"
)

// BuildOptions tunes tree inference.
type BuildOptions struct {
	// RootName names the single top domain; "fabric" when empty.
	RootName string
}

// Build infers the tree from per-node evidence. Nodes that share a compute switch land in one leaf domain;
// because the grouping is transitive, rail-optimised leaves that share hosts form one domain. Storage links
// are ignored. All leaf domains hang below one root domain. Nodes with no compute link are listed in
// Unplaced. Evidence that cannot be used is returned as Problems and left out; the result is deterministic
// whatever the order of the input.
func Build(evidence []NodeEvidence, opts BuildOptions) (*Tree, []Problem) {
	rootName := opts.RootName
	if rootName == "" {
		rootName = TierNameRoot
	}
	var problems []Problem
	byNode := map[string]NodeEvidence{}
	for _, e := range evidence {
		if reason := e.Check(); reason != "" {
			problems = append(problems, Problem{Node: e.Node, Source: e.Source, Reason: reason})
			continue
		}
		if prev, dup := byNode[e.Node]; dup {
			problems = append(problems, Problem{Node: e.Node, Source: e.Source,
				Reason: "evidence given twice for the node; the one from source " + prev.Source + " is kept"})
			continue
		}
		byNode[e.Node] = e
	}

	groups, unplaced := groupBySwitch(byNode)
	t := NewTree()
	t.Unplaced = unplaced
	if len(groups) == 0 {
		return t, problems
	}
	root := &Domain{Name: SafeName(rootName), Tier: 2, TierName: TierNameRoot, Source: "inferred"}
	for _, g := range groups {
		leaf := &Domain{
			Name:     leafName(g, t),
			Tier:     1,
			TierName: TierNameLeaf,
			Parent:   root.Name,
			Nodes:    g.nodes,
			Switches: g.switchIDs,
			Source:   g.source,
		}
		_ = t.Add(leaf) // leafName guarantees a fresh name
		root.Children = append(root.Children, leaf.Name)
	}
	sort.Strings(root.Children)
	if _, clash := t.Domains[root.Name]; clash {
		root.Name = UniqueName(rootName)
		for _, c := range root.Children {
			t.Domains[c].Parent = root.Name
		}
	}
	_ = t.Add(root)
	return t, problems
}

// leafGroup is a set of nodes joined by shared compute switches.
type leafGroup struct {
	nodes     []string
	switchIDs []string
	// names maps switch ID to the name it announced, if any.
	names  map[string]string
	source string
}

// groupBySwitch joins nodes that share a compute switch (union-find over the node–switch graph) and returns
// the groups in a stable order, plus the nodes that reach no compute switch.
func groupBySwitch(byNode map[string]NodeEvidence) ([]*leafGroup, []string) {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	switchKey := func(id string) string { return "s\x00" + id }
	nodeKey := func(n string) string { return "n\x00" + n }

	var unplaced []string
	names := map[string]string{}
	for n, e := range byNode {
		compute := 0
		for _, l := range e.Links {
			if l.Storage {
				continue
			}
			compute++
			sk := switchKey(l.SwitchID)
			if _, ok := parent[sk]; !ok {
				parent[sk] = sk
			}
			if nk := nodeKey(n); parent[nk] == "" {
				parent[nk] = nk
			}
			union(nodeKey(n), sk)
			if l.SwitchName != "" && (names[l.SwitchID] == "" || l.SwitchName < names[l.SwitchID]) {
				names[l.SwitchID] = l.SwitchName
			}
		}
		if compute == 0 {
			unplaced = append(unplaced, n)
		}
	}
	sort.Strings(unplaced)

	byRoot := map[string]*leafGroup{}
	for key := range parent {
		r := find(key)
		g := byRoot[r]
		if g == nil {
			g = &leafGroup{names: map[string]string{}}
			byRoot[r] = g
		}
		kind, id, _ := strings.Cut(key, "\x00")
		if kind == "n" {
			g.nodes = append(g.nodes, id)
			if src := byNode[id].Source; g.source == "" || src < g.source {
				g.source = src
			}
		} else {
			g.switchIDs = append(g.switchIDs, id)
			if nm := names[id]; nm != "" {
				g.names[id] = nm
			}
		}
	}
	groups := make([]*leafGroup, 0, len(byRoot))
	for _, g := range byRoot {
		sort.Strings(g.nodes)
		sort.Strings(g.switchIDs)
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].switchIDs[0] < groups[j].switchIDs[0] })
	return groups, unplaced
}

// leafName names a leaf domain after its switches: the smallest announced switch name (or identifier), with
// "-rails" when several leaves share hosts. A clash with an existing domain falls back to a hashed name of
// all the group's switch identifiers, which is unique and still stable.
func leafName(g *leafGroup, t *Tree) string {
	best := ""
	for _, id := range g.switchIDs {
		label := g.names[id]
		if label == "" {
			label = id
		}
		if best == "" || label < best {
			best = label
		}
	}
	if len(g.switchIDs) > 1 {
		best += "-rails"
	}
	name := SafeName(best)
	if _, clash := t.Domains[name]; clash {
		name = UniqueName(strings.Join(g.switchIDs, ","))
	}
	return name
}
