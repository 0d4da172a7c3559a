package topology

import (
	"cmp"
	"slices"
	"strings"
)

// Conflict is a node that two sources place behind different switches.
type Conflict struct {
	// Node is the Kubernetes node.
	Node string
	// Kept is the source whose evidence was used; Dropped the one whose evidence was not.
	Kept, Dropped string
}

// Merge combines the evidence of two sources, primary first: every node of primary is kept as it is, a node
// only secondary knows is added, and the switch links and switch names of both are joined. A node primary
// knows without a compute link (an agent that runs only the NVML probe) takes secondary's links and source,
// keeping primary's NVLink domain: evidence that places nothing never takes a node out of the tree. A node both know
// whose compute switches have nothing in common is a conflict; primary wins, so the result is deterministic.
// When secondary's evidence of a node both know is left out without a conflict, the switch names it gives,
// if it is fabric-wide evidence (not SelfReported), are kept in SwitchNames: a capture's names still outrank
// the reports' when the reports place the nodes.
func Merge(primary, secondary Input) (Input, []Conflict) {
	out := Input{
		Nodes:       slices.Clone(primary.Nodes),
		SwitchLinks: slices.Concat(primary.SwitchLinks, secondary.SwitchLinks),
		SwitchNames: slices.Concat(primary.SwitchNames, secondary.SwitchNames),
	}
	byNode := make(map[string]NodeEvidence, len(primary.Nodes))
	index := make(map[string]int, len(primary.Nodes))
	for i, n := range primary.Nodes {
		byNode[n.Node] = n
		index[n.Node] = i
	}
	var conflicts []Conflict
	for _, n := range secondary.Nodes {
		p, known := byNode[n.Node]
		if !known {
			out.Nodes = append(out.Nodes, n)
			continue
		}
		if len(p.computeSwitches()) == 0 && len(n.computeSwitches()) > 0 {
			placed := n
			placed.Links = slices.Concat(n.Links, p.Links) // p's links, if any, are storage links
			placed.NVLinkDomain = cmp.Or(p.NVLinkDomain, n.NVLinkDomain)
			if p.NVLinkDomain != "" {
				placed.NVLinkSubDomain = p.NVLinkSubDomain
			}
			out.Nodes[index[n.Node]] = placed
			continue
		}
		if disjoint(p.computeSwitches(), n.computeSwitches()) {
			conflicts = append(conflicts, Conflict{Node: n.Node, Kept: p.Source, Dropped: n.Source})
			continue
		}
		out.SwitchNames = append(out.SwitchNames, n.switchNames()...)
	}
	return out, conflicts
}

// switchNames returns the names e gives switches, when e is fabric-wide evidence.
func (e NodeEvidence) switchNames() []SwitchName {
	if e.SelfReported {
		return nil
	}
	var out []SwitchName
	for _, l := range e.Links {
		if l.SwitchName != "" && l.SwitchID != "" {
			out = append(out, SwitchName{SwitchID: l.SwitchID, Name: l.SwitchName, Source: e.Source})
		}
	}
	return out
}

func (e NodeEvidence) computeSwitches() []string {
	var out []string
	for _, l := range e.Links {
		if !l.Storage {
			out = append(out, l.SwitchID)
		}
	}
	return out
}

// disjoint reports whether two switch sets that can be compared share nothing. Identifiers of different kinds
// (an LLDP chassis MAC, an InfiniBand GUID, a label value) name different things, so only kinds both sides
// have are compared; an empty side, or no kind in common, is no disagreement.
func disjoint(a, b []string) bool {
	common := false
	for _, x := range a {
		if slices.Contains(b, x) {
			return false
		}
		if !common {
			kind := idKind(x)
			common = slices.ContainsFunc(b, func(y string) bool { return idKind(y) == kind })
		}
	}
	return common
}

// idKind is the kind prefix of a switch identifier ("guid" of "guid:…"); "" when it has none.
func idKind(id string) string {
	kind, _, ok := strings.Cut(id, ":")
	if !ok {
		return ""
	}
	return kind
}
