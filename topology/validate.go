package topology

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks that t is a tree fabricmap may publish: names are DNS-1123 subdomains, every parent
// exists and lists its child, tiers strictly increase upward, there is no cycle, a domain holds either
// child domains or nodes, and no node sits in two domains. It returns every problem found, joined.
func (t *Tree) Validate() error {
	var errs []error
	nodes := 0
	for _, d := range t.Domains {
		nodes += len(d.Nodes)
	}
	seenNode := make(map[string]string, nodes)
	for _, name := range t.Names() {
		d := t.Domains[name]
		if d.Name != name {
			errs = append(errs, fmt.Errorf("domain %q is stored under name %q", d.Name, name))
		}
		if !plainSubdomain(name) {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, fmt.Errorf("domain %q: invalid name: %s", name, msg))
			}
		}
		if d.Tier < 1 {
			errs = append(errs, fmt.Errorf("domain %q: tier %d is below 1", name, d.Tier))
		}
		if d.Parent != "" {
			p, ok := t.Domains[d.Parent]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("domain %q: parent %q does not exist", name, d.Parent))
			case p.Tier <= d.Tier:
				errs = append(errs, fmt.Errorf("domain %q (tier %d): parent %q has tier %d, not higher", name, d.Tier, p.Name, p.Tier))
			case !slices.Contains(p.Children, name):
				errs = append(errs, fmt.Errorf("domain %q: parent %q does not list it as a child", name, p.Name))
			}
		}
		for _, c := range d.Children {
			if cd, ok := t.Domains[c]; !ok || cd.Parent != name {
				errs = append(errs, fmt.Errorf("domain %q: child %q does not name it as parent", name, c))
			}
		}
		if len(d.Children) > 0 && len(d.Nodes) > 0 {
			errs = append(errs, fmt.Errorf("domain %q holds both child domains and nodes", name))
		}
		if len(d.Children) == 0 && len(d.Nodes) == 0 {
			errs = append(errs, fmt.Errorf("domain %q is empty", name))
		}
		for _, n := range d.Nodes {
			if other, dup := seenNode[n]; dup {
				errs = append(errs, fmt.Errorf("node %q is in two domains: %q and %q", n, other, name))
			}
			seenNode[n] = name
		}
		if cycle := t.cycleFrom(name); cycle != "" {
			errs = append(errs, errors.New(cycle))
		}
	}
	return errors.Join(errs...)
}

// cycleFrom walks parents from name and describes a cycle if one is met. A chain that ends within as many
// steps as there are domains has none: only a longer one is walked again, remembering the domains it met.
func (t *Tree) cycleFrom(name string) string {
	cur := name
	for range len(t.Domains) + 1 {
		d, ok := t.Domains[cur]
		if !ok || d.Parent == "" {
			return ""
		}
		cur = d.Parent
	}
	seen := map[string]bool{}
	for cur := name; cur != ""; {
		if seen[cur] {
			return fmt.Sprintf("domain %q: parent chain loops back to %q", name, cur)
		}
		seen[cur] = true
		d, ok := t.Domains[cur]
		if !ok {
			return ""
		}
		cur = d.Parent
	}
	return ""
}
