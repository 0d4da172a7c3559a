package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// acceleratorSpec is an accelerator domain or sub-domain that addAcceleratorDomains builds, before it has a name.
type acceleratorSpec struct {
	// d is the domain, without its name and parent.
	d *Domain
	// parent is the domain it goes below: a leaf, or the accelerator domain of a sub-domain.
	parent *Domain
	// raw is the name it wants, before SafeName.
	raw string
	// node is the node it stands alone for, named after it; "" for the others.
	node string
	// own marks the accelerator domain named after its NVLink domain alone: the whole domain, or the part of the
	// leaf that holds most of it.
	own bool
	// count is the number of nodes at or below it.
	count int
}

// nameAccelerators names the domains of specs, adds them to t and hangs them below their parents. Names are
// SafeName(raw); a name two of them want goes, in this order, to the one named after its node (no evidence of
// another node names it), to the one with more nodes, to a domain's own name before a part's, then by raw
// name; the others get the hashed form (UniqueName). A switch domain that has a name an accelerator domain
// wants (a switch named like a node; evictPrefixed took the names starting with acceleratorPrefix already) gives
// it up and is named after its switches, hashed, with a Problem: so no switch name a node reports takes an
// NVLink domain's or a node's name.
func nameAccelerators(t *Tree, specs []*acceleratorSpec) []Problem {
	ranked := slices.Clone(specs)
	slices.SortStableFunc(ranked, func(a, b *acceleratorSpec) int {
		return cmp.Or(first(a.node != "", b.node != ""), b.count-a.count, first(a.own, b.own),
			strings.Compare(a.raw, b.raw), strings.Compare(a.parent.Name, b.parent.Name))
	})
	var problems []Problem
	for _, s := range ranked {
		name := SafeName(s.raw)
		if held := t.Domains[name]; held != nil && IsSwitchDomain(held) {
			problems = append(problems, evict(t, held))
		}
		if t.Domains[name] != nil {
			name = uniqueIn(t, s.raw)
		}
		s.d.Name = name
		_ = t.Add(s.d) // a free name
	}
	parents := map[*Domain]bool{}
	for _, s := range specs {
		s.d.Parent = s.parent.Name
		s.parent.Children = append(s.parent.Children, s.d.Name)
		s.parent.Nodes = nil // every node of a leaf that gets accelerator domains is in one
		parents[s.parent] = true
	}
	for p := range parents {
		slices.Sort(p.Children)
	}
	return problems
}

// evictPrefixed renames every switch domain of t named like an accelerator domain of an NVLink domain (its
// name starts with acceleratorPrefix), before the accelerator domains, and their parts' names made from their
// leaves' names, are named.
func evictPrefixed(t *Tree) []Problem {
	var problems []Problem
	for _, name := range t.Names() {
		if d := t.Domains[name]; IsSwitchDomain(d) && strings.HasPrefix(name, acceleratorPrefix) {
			problems = append(problems, evict(t, d))
		}
	}
	return problems
}

// evict names switch domain d of t after its switches, hashed, so that an accelerator domain may have its name,
// and says so.
func evict(t *Tree, d *Domain) Problem {
	name := d.Name
	renamed := uniqueIn(t, strings.Join(d.Switches, ","))
	renameDomain(t, d, renamed)
	return Problem{Source: d.Source, Reason: fmt.Sprintf(
		"domain %q has the name of an accelerator domain (%q<NVLink domain>, or a node's own name), which comes before a switch's: it is named %q after its switches instead",
		name, acceleratorPrefix, renamed)}
}

// first orders true before false.
func first(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// uniqueIn returns UniqueName(raw), or, in the unlikely case that t has a domain of that name, a hashed name of
// raw and a counter that it has not.
func uniqueIn(t *Tree, raw string) string {
	name := UniqueName(raw)
	for i := 2; t.Domains[name] != nil; i++ {
		name = UniqueName(fmt.Sprintf("%s#%d", raw, i))
	}
	return name
}

// renameDomain gives d, a domain of t, the free name name, and updates its parent's and children's links to it.
func renameDomain(t *Tree, d *Domain, name string) {
	delete(t.Domains, d.Name)
	if p := t.Domains[d.Parent]; p != nil {
		for i, c := range p.Children {
			if c == d.Name {
				p.Children[i] = name
			}
		}
		slices.Sort(p.Children)
	}
	for _, c := range d.Children {
		if cd := t.Domains[c]; cd != nil {
			cd.Parent = name
		}
	}
	d.Name = name
	t.Domains[name] = d
}
