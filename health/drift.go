package health

import (
	"fmt"
	"slices"

	"github.com/fabricmap/fabricmap/topology"
)

// judgeDrift lists every difference between the tree and the plan. Domains are matched by what they stand
// for, not by name (matchDomains), so a plan written before a rename still matches. It finds: a domain of the
// plan that no domain of the tree matches (critical) and one of the tree that the plan lacks (info); a domain
// below another parent than planned; a node in another leaf domain than planned, and a planned node the tree
// lacks (warnings); a node the plan lacks (info). The root and the accelerator domains are not matched: the
// nodes' leaves say where they are.
func judgeDrift(r *report, actual, expected *topology.Tree) {
	match := matchDomains(actual, expected)
	judgeDomainDrift(r, actual, expected, match)
	judgeNodeDrift(r, actual, expected, match)
}

func judgeDomainDrift(r *report, actual, expected *topology.Tree, match matched) {
	root := ""
	if roots := actual.Roots(); len(roots) == 1 {
		root = roots[0]
	}
	for _, e := range expected.Domains {
		if !matchable(e) {
			continue
		}
		a := match.actual[e.Name]
		if a == nil {
			why := "no domain of the tree holds its nodes or switches"
			if t := match.taken[e.Name]; t != nil {
				why = fmt.Sprintf("its nodes or switches are in %s, which matches the plan's %s", t.Name, match.planned[t.Name])
			}
			r.add(Finding{Kind: KindDrift, Severity: SeverityCritical, Domain: e.Name, Switches: slices.Clone(e.Switches),
				Message: fmt.Sprintf("%s domain %s of the plan (%s) is gone: %s", tierKey(e), e.Name, nodeCount(nodesUnder(expected, e)), why)})
			continue
		}
		if want, ok := plannedParent(root, expected, e, match); ok && a.Parent != want {
			r.add(Finding{Kind: KindDrift, Severity: SeverityWarning, Domain: a.Name, Switches: slices.Clone(a.Switches),
				Message: fmt.Sprintf("%s domain %s%s sits below %s where the plan has it below %s%s",
					tierKey(a), a.Name, thePlans(a.Name, e.Name), a.Parent, want, thePlans(want, e.Parent))})
		}
	}
	for _, a := range actual.Domains {
		if _, ok := match.planned[a.Name]; matchable(a) && !ok {
			r.add(Finding{Kind: KindDrift, Severity: SeverityInfo, Domain: a.Name, Switches: slices.Clone(a.Switches),
				Message: fmt.Sprintf("%s domain %s (%s) is not in the plan", tierKey(a), a.Name, nodeCount(nodesUnder(actual, a)))})
		}
	}
}

// plannedParent is the name, in the tree, of the parent the plan gives e: root, the tree's root, for a domain
// the plan puts below its root, the match of the planned parent otherwise; false when that parent matches
// nothing (its own finding says so) or the tree has no single root.
func plannedParent(root string, expected *topology.Tree, e *topology.Domain, match matched) (string, bool) {
	p := expected.Domains[e.Parent]
	switch {
	case p == nil:
		return "", false
	case p.Parent == "":
		return root, root != ""
	case match.actual[p.Name] != nil:
		return match.actual[p.Name].Name, true
	}
	return "", false
}

// thePlans says, when the tree names a domain otherwise than the plan, " (the plan's <planned>)".
func thePlans(name, planned string) string {
	if name == planned {
		return ""
	}
	return " (the plan's " + planned + ")"
}

func judgeNodeDrift(r *report, actual, expected *topology.Tree, match matched) {
	got, want := leafDomains(actual), leafDomains(expected)
	unplaced := map[string]bool{}
	for _, n := range actual.Unplaced {
		unplaced[n] = true
	}
	for node, e := range want {
		a := got[node]
		switch {
		case a == nil:
			why := ""
			if unplaced[node] {
				why = ": no evidence places it"
			}
			r.add(Finding{Kind: KindDrift, Severity: SeverityWarning, Node: node, Domain: e.Name,
				Message: fmt.Sprintf("%s is in the plan (leaf domain %s) but not in the tree%s", node, e.Name, why)})
		case match.actual[e.Name] != a:
			planned := e.Name + ", which is gone"
			if m := match.actual[e.Name]; m != nil {
				planned = m.Name + thePlans(m.Name, e.Name)
			}
			r.add(Finding{Kind: KindDrift, Severity: SeverityWarning, Node: node, Domain: a.Name,
				Message: fmt.Sprintf("%s is in leaf domain %s where the plan has it in %s", node, a.Name, planned)})
		}
	}
	for node, a := range got {
		if want[node] == nil {
			r.add(Finding{Kind: KindDrift, Severity: SeverityInfo, Node: node, Domain: a.Name,
				Message: fmt.Sprintf("%s (leaf domain %s) is not in the plan", node, a.Name)})
		}
	}
}

// nodeCount says how many nodes there are: "1 node", "4 nodes".
func nodeCount(nodes []string) string {
	if len(nodes) == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", len(nodes))
}
