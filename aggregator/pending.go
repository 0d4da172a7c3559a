package aggregator

import (
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// pendingPlan is what becomes of the owned HyperNodes absent from the tree (pending: waiting for their grace
// period) in one pass, so that the HyperNodes stay one tree while they wait: a pending HyperNode left as it
// was would be a second root beside the tree's (its parent no longer lists it), still holding nodes the tree
// has placed elsewhere.
type pendingPlan struct {
	// desired are the HyperNodes of the tree, each with the pending HyperNodes kept directly below it added to
	// its members.
	desired []topologyv1alpha1.HyperNode
	// kept are the pending HyperNodes that wait for their grace period, each with what is left of its members:
	// no node the tree places, no HyperNode the tree has, none deleted this pass; sorted by name.
	kept []topologyv1alpha1.HyperNode
	// unanchored are the pending HyperNodes with no place left below the tree (no HyperNode of the tree of a
	// higher tier above them): due for deletion at once, through the deletion guard; sorted.
	unanchored []string
}

// anchorPending keeps every pending HyperNode (an owned one absent from desired and not in going, the
// HyperNodes deleted this pass) below the tree while it waits for its grace period: below its parent when the
// tree still has it (that HyperNode lists it again), or the nearest HyperNode of the tree above it whose tier
// is higher, or under its pending parent when that one is kept. It keeps of a pending HyperNode's members
// what the tree has not placed elsewhere: nodes not in placed (a node that lost its uplinks stays in the leaf
// it lost, as its held labels say), pending HyperNodes kept below it, and label selectors as they are (they
// follow the node labels); a regular expression becomes the exact names of the nodes it still selects among
// nodeNames. A pending HyperNode that no HyperNode of the tree stands above is unanchored. With no desired
// HyperNode at all (every report gone) there is no tree to be a second root beside: each pending HyperNode
// is kept as it stands, but for members deleted this pass, and the deletion guard decides.
func anchorPending(desired, existing []topologyv1alpha1.HyperNode, placed map[string]bool, nodeNames []string, going map[string]bool) pendingPlan {
	want := make(map[string]int, len(desired))
	for i := range desired {
		want[desired[i].Name] = i
	}
	have := make(map[string]*topologyv1alpha1.HyperNode, len(existing))
	names := make([]string, 0, len(existing))
	for i := range existing {
		have[existing[i].Name] = &existing[i]
		names = append(names, existing[i].Name)
	}
	sort.Strings(names)
	parent := map[string]string{} // child HyperNode → the owned HyperNode that lists it (the first by name)
	for _, n := range names {
		for _, m := range have[n].Spec.Members {
			if c := hyperNodeMember(m); c != "" && c != n {
				if _, seen := parent[c]; !seen {
					parent[c] = n
				}
			}
		}
	}
	pending := map[string]bool{}
	for _, n := range names {
		if _, ok := want[n]; !ok && !going[n] {
			pending[n] = true
		}
	}

	const (
		unknown = iota
		visiting
		keep
		drop
	)
	state := map[string]int{}
	attach := map[string][]string{} // desired HyperNode → pending HyperNodes kept directly below it
	under := map[string]string{}    // pending HyperNode → the kept pending HyperNode it stays below
	var decide func(p string) bool
	decide = func(p string) bool {
		switch state[p] {
		case keep:
			return true
		case drop, visiting:
			return false
		}
		state[p] = visiting
		ok := len(desired) == 0
		if x := parent[p]; ok && pending[x] && decide(x) {
			under[p] = x
		}
		tier := have[p].Spec.Tier
		for x, steps := parent[p], 0; x != "" && !ok && steps <= len(names); x, steps = parent[x], steps+1 {
			if i, inTree := want[x]; inTree {
				if desired[i].Spec.Tier > tier {
					ok = true
					attach[x] = append(attach[x], p)
				}
				break
			}
			if pending[x] && decide(x) {
				ok = true
				under[p] = x
			}
			// else: x goes this pass, or is not kept itself: look further up
		}
		state[p] = drop
		if ok {
			state[p] = keep
		}
		return ok
	}
	var plan pendingPlan
	for _, p := range names {
		if pending[p] && !decide(p) {
			plan.unanchored = append(plan.unanchored, p)
		}
	}

	plan.desired = slices.Clone(desired)
	for x, kids := range attach {
		d := desired[want[x]].DeepCopy()
		d.Spec.Members = withChildren(d.Spec.Members, kids)
		plan.desired[want[x]] = *d
	}
	for _, p := range names {
		if state[p] != keep {
			continue
		}
		members := make([]topologyv1alpha1.MemberSpec, 0, len(have[p].Spec.Members))
		for _, m := range have[p].Spec.Members {
			if c := hyperNodeMember(m); c != "" {
				if under[c] == p && state[c] == keep {
					members = append(members, m)
				}
				continue
			}
			members = append(members, unplacedMembers(m, placed, nodeNames)...)
		}
		plan.kept = append(plan.kept, keptHyperNode(have[p], members))
	}
	return plan
}

// hyperNodeMember is the name of the HyperNode m selects by exact name; "" for any other member.
func hyperNodeMember(m topologyv1alpha1.MemberSpec) string {
	if m.Type != topologyv1alpha1.MemberTypeHyperNode || m.Selector.ExactMatch == nil {
		return ""
	}
	return m.Selector.ExactMatch.Name
}

// unplacedMembers is what is left of a node member of a pending HyperNode: an exact name the tree does not
// place, a label selector as it is, a regular expression as the exact names of the nodes it selects that the
// tree does not place; nothing else.
func unplacedMembers(m topologyv1alpha1.MemberSpec, placed map[string]bool, nodeNames []string) []topologyv1alpha1.MemberSpec {
	if m.Type != topologyv1alpha1.MemberTypeNode {
		return []topologyv1alpha1.MemberSpec{m}
	}
	switch s := m.Selector; {
	case s.ExactMatch != nil:
		if placed[s.ExactMatch.Name] {
			return nil
		}
		return []topologyv1alpha1.MemberSpec{m}
	case s.LabelMatch != nil:
		return []topologyv1alpha1.MemberSpec{m}
	case s.RegexMatch != nil:
		selects, err := hypernodegen.MemberMatcher(s)
		if err != nil {
			return nil
		}
		var out []topologyv1alpha1.MemberSpec
		for _, n := range nodeNames {
			if !placed[n] && selects(n, nil) {
				out = append(out, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
					Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}})
			}
		}
		return out
	}
	return nil
}

// withChildren returns members with a HyperNode member for each of kids added, the HyperNode members sorted by
// name before the others, as hypernodegen lists a domain's children: a parent whose pending child stays below
// it lists it where it did, and costs no write.
func withChildren(members []topologyv1alpha1.MemberSpec, kids []string) []topologyv1alpha1.MemberSpec {
	var children, rest []topologyv1alpha1.MemberSpec
	for _, m := range members {
		if hyperNodeMember(m) != "" {
			children = append(children, m)
		} else {
			rest = append(rest, m)
		}
	}
	for _, k := range kids {
		children = append(children, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeHyperNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: k}}})
	}
	slices.SortStableFunc(children, func(a, b topologyv1alpha1.MemberSpec) int {
		return strings.Compare(hyperNodeMember(a), hyperNodeMember(b))
	})
	return append(children, rest...)
}

// keptHyperNode is the apply configuration of a pending HyperNode that waits with members: what fabricmap
// owns of cur (the labels and annotations FieldManager applied, as they are; all of them when cur carries no
// record of its managers; tier and tier name) and these members. Its node count is that of its exact node
// members, or cur's when a label selects them or it holds HyperNodes.
func keptHyperNode(cur *topologyv1alpha1.HyperNode, members []topologyv1alpha1.MemberSpec) topologyv1alpha1.HyperNode {
	hn := topologyv1alpha1.HyperNode{
		TypeMeta:   metav1.TypeMeta{APIVersion: topologyv1alpha1.SchemeGroupVersion.String(), Kind: "HyperNode"},
		ObjectMeta: metav1.ObjectMeta{Name: cur.Name},
		Spec:       topologyv1alpha1.HyperNodeSpec{Tier: cur.Spec.Tier, TierName: cur.Spec.TierName, Members: members},
		Status:     cur.Status,
	}
	hn.Labels = ownedOf(cur.Labels, cur.ManagedFields, func(o owned) map[string]bool { return o.labels })
	hn.Annotations = ownedOf(cur.Annotations, cur.ManagedFields, func(o owned) map[string]bool { return o.annotations })
	hn.Labels[wellknown.ManagedByLabel] = wellknown.ManagedByValue
	counted, nodes := true, 0 // counted: every member is a node by name
	for _, m := range members {
		if m.Type != topologyv1alpha1.MemberTypeNode || m.Selector.LabelMatch != nil {
			counted = false
		} else {
			nodes++
		}
	}
	if counted {
		hn.Status.NodeCount = int64(nodes)
	}
	return hn
}

// ownedOf returns the entries of have (labels or annotations, as pick selects) that FieldManager applied;
// every entry when fields hold no record of FieldManager at all. Never nil.
func ownedOf(have map[string]string, fields []metav1.ManagedFieldsEntry, pick func(owned) map[string]bool) map[string]string {
	recorded := slices.ContainsFunc(fields, func(f metav1.ManagedFieldsEntry) bool { return f.Manager == wellknown.AggregatorFieldManager })
	mine := pick(ownedKeys(fields, wellknown.AggregatorFieldManager))
	out := map[string]string{}
	for k, v := range have {
		if !recorded || mine[k] {
			out[k] = v
		}
	}
	return out
}
