package hypernodegen

import (
	"fmt"
	"slices"
	"strings"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/wellknown"
)

// ForeignAdvice says what to turn off when HyperNodes not made by fabricmap hold fabricmap's nodes: one
// writer of HyperNodes per cluster.
const ForeignAdvice = "turn off Volcano's own HyperNode discovery (remove networkTopologyDiscovery from the " +
	"volcano-controller-configmap ConfigMap in Volcano's namespace) or whatever else writes them, then delete them"

// maxNamedMembers is how many members a ForeignHyperNode's message names; the rest are counted.
const maxNamedMembers = 5

// ForeignHyperNode is a HyperNode fabricmap did not make (no fabricmap ownership label) whose members include
// nodes fabricmap places, or HyperNodes fabricmap made: those then have two parents, and a scheduler reading
// HyperNodes (Volcano's) reads a broken tree.
type ForeignHyperNode struct {
	// Name and Tier are the foreign HyperNode's.
	Name string `json:"name"`
	Tier int    `json:"tier"`
	// Members are fabricmap's nodes and HyperNodes among its members, sorted.
	Members []string `json:"members"`
}

// ForeignHyperNodes returns the HyperNodes of all that fabricmap did not make and whose member selectors
// pick a node of placed (read with its labels from nodeLabels) or a HyperNode of all that fabricmap made,
// sorted by name. A member selector that does not parse picks nothing. It reads; it changes nothing.
func ForeignHyperNodes(all []topologyv1alpha1.HyperNode, placed map[string]bool, nodeLabels map[string]map[string]string) []ForeignHyperNode {
	ours := map[string]bool{}
	for i := range all {
		if Owned(all[i].Labels) {
			ours[all[i].Name] = true
		}
	}
	var out []ForeignHyperNode
	for i := range all {
		hn := &all[i]
		if Owned(hn.Labels) {
			continue
		}
		picked := map[string]bool{}
		for _, m := range hn.Spec.Members {
			candidates := placed
			if m.Type == topologyv1alpha1.MemberTypeHyperNode {
				candidates = ours
			}
			for _, name := range pickedMembers(m.Selector, candidates, nodeLabels) {
				picked[name] = true
			}
		}
		if len(picked) == 0 {
			continue
		}
		f := ForeignHyperNode{Name: hn.Name, Tier: int(hn.Spec.Tier)}
		for name := range picked {
			f.Members = append(f.Members, name)
		}
		slices.Sort(f.Members)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b ForeignHyperNode) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Owned reports whether labels mark an object as fabricmap's (OwnedSelector): the one test of ownership for an
// object read whole; caches and lists select by OwnedSelector itself.
func Owned(labels map[string]string) bool {
	return labels[wellknown.ManagedByLabel] == wellknown.ManagedByValue
}

// pickedMembers returns the names of candidates that sel picks.
func pickedMembers(sel topologyv1alpha1.MemberSelector, candidates map[string]bool, nodeLabels map[string]map[string]string) []string {
	if sel.ExactMatch != nil {
		if candidates[sel.ExactMatch.Name] {
			return []string{sel.ExactMatch.Name}
		}
		return nil
	}
	match, err := MemberMatcher(sel)
	if err != nil {
		return nil
	}
	var out []string
	for name := range candidates {
		if match(name, nodeLabels[name]) {
			out = append(out, name)
		}
	}
	return out
}

// Summary names f, its tier and up to a few of its members: `leaf-hn-0 (tier 1; 4 of fabricmap's: n1, n2, n3, n4)`.
func (f ForeignHyperNode) Summary() string {
	named := f.Members
	more := ""
	if len(named) > maxNamedMembers {
		more = fmt.Sprintf(" and %d more", len(named)-maxNamedMembers)
		named = named[:maxNamedMembers]
	}
	return fmt.Sprintf("%s (tier %d; %d of fabricmap's: %s%s)", f.Name, f.Tier, len(f.Members), strings.Join(named, ", "), more)
}

// Message says for a person what is wrong with f and what to do.
func (f ForeignHyperNode) Message() string {
	return fmt.Sprintf("HyperNode %s was not made by fabricmap and holds fabricmap's nodes or HyperNodes: "+
		"each now has two parents and Volcano's scheduler reads a broken tree; fabricmap leaves it alone: %s", f.Summary(), ForeignAdvice)
}

// Finding is f as a fabric health finding (critical: a scheduler reads a broken tree).
func (f ForeignHyperNode) Finding() health.Finding {
	return health.Finding{Kind: health.KindForeignHyperNode, Severity: health.SeverityCritical, Domain: f.Name, Message: f.Message()}
}
