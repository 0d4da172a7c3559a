package health

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// matched is the pairing of the plan's domains with the tree's.
type matched struct {
	// actual maps a planned domain's name to the tree's domain that matches it.
	actual map[string]*topology.Domain
	// planned maps the names of the tree's domains that match one of the plan to that domain's name.
	planned map[string]string
	// taken maps the name of a planned domain that matches nothing to the tree's domain that shares most with
	// it but matches another planned domain (two planned leaves cabled into one, say).
	taken map[string]*topology.Domain
}

// matchable reports whether drift matches d with a domain of the other tree: not a root, not an accelerator
// domain or sub-domain (as topology.KeepNames carries names over).
func matchable(d *topology.Domain) bool {
	return d.Parent != "" && topology.IsSwitchDomain(d)
}

// tierKey is what drift pairs domains by: the tier's name, or "tier-N" when the tree names none.
func tierKey(d *topology.Domain) string {
	if d.TierName != "" {
		return d.TierName
	}
	return fmt.Sprintf("tier-%d", d.Tier)
}

// matchDomains pairs each matchable domain of the plan with a domain of the tree of the same tier name that
// shares nodes (at or below each) or switches with it, one to one: pairs are taken by the most nodes shared,
// then the most switches, then by name. So a leaf domain renamed, or one that gained or lost a host, still
// matches, and of two planned leaves merged into one, the one with more of its hosts there matches it.
func matchDomains(actual, expected *topology.Tree) matched {
	holder := map[string]map[string]*topology.Domain{}     // tier key → node → the tree's domain of that tier above it
	bySwitch := map[string]map[string][]*topology.Domain{} // tier key → switch → the tree's domains of that tier
	for _, a := range actual.Domains {
		if !matchable(a) {
			continue
		}
		k := tierKey(a)
		if holder[k] == nil {
			holder[k], bySwitch[k] = map[string]*topology.Domain{}, map[string][]*topology.Domain{}
		}
		for _, n := range nodesUnder(actual, a) {
			holder[k][n] = a
		}
		for _, s := range a.Switches {
			bySwitch[k][s] = append(bySwitch[k][s], a)
		}
	}
	type pair struct {
		e, a            *topology.Domain
		nodes, switches int
	}
	var pairs []pair
	for _, e := range expected.Domains {
		if !matchable(e) {
			continue
		}
		k := tierKey(e)
		shared := map[*topology.Domain]*pair{}
		get := func(a *topology.Domain) *pair {
			if shared[a] == nil {
				shared[a] = &pair{e: e, a: a}
			}
			return shared[a]
		}
		for _, n := range nodesUnder(expected, e) {
			if a := holder[k][n]; a != nil {
				get(a).nodes++
			}
		}
		for _, s := range e.Switches {
			for _, a := range bySwitch[k][s] {
				get(a).switches++
			}
		}
		for _, p := range shared {
			pairs = append(pairs, *p)
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		switch {
		case x.nodes != y.nodes:
			return y.nodes - x.nodes
		case x.switches != y.switches:
			return y.switches - x.switches
		case x.e.Name != y.e.Name:
			return strings.Compare(x.e.Name, y.e.Name)
		}
		return strings.Compare(x.a.Name, y.a.Name)
	})
	m := matched{actual: map[string]*topology.Domain{}, planned: map[string]string{}, taken: map[string]*topology.Domain{}}
	for _, p := range pairs {
		if m.actual[p.e.Name] != nil {
			continue
		}
		if _, gone := m.planned[p.a.Name]; !gone {
			m.actual[p.e.Name], m.planned[p.a.Name] = p.a, p.e.Name
		} else if m.taken[p.e.Name] == nil {
			m.taken[p.e.Name] = p.a
		}
	}
	for e := range m.actual {
		delete(m.taken, e)
	}
	return m
}

// nodesUnder returns the nodes at or below d, each domain visited once (a tree read from a file may loop).
func nodesUnder(t *topology.Tree, d *topology.Domain) []string {
	var nodes []string
	seen := map[*topology.Domain]bool{}
	for stack := []*topology.Domain{d}; len(stack) > 0; {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur == nil || seen[cur] {
			continue
		}
		seen[cur] = true
		nodes = append(nodes, cur.Nodes...)
		for _, c := range cur.Children {
			stack = append(stack, t.Domains[c])
		}
	}
	return nodes
}
