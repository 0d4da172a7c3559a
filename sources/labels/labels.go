// Package labels turns the node labels in which an administrator already wrote the network (a zone, a spine, a
// leaf, …) into topology evidence, so that topology.Build makes the same tree of them that it makes of switch
// evidence: every distinct labelled path becomes a chain of pseudo-switches, one per label key, and each
// node is cabled to the pseudo-switch of its lowest label.
//
// A value names a domain below its parent only: leaf "l1" under spine "s1" and leaf "l1" under spine "s2" are
// two leaves, since racks and leaves are often numbered per row or per zone. Each pseudo-switch is therefore
// identified by its whole path from the top key down. Domain names come from the values; a value that stands
// for several domains is prefixed with its parent's name ("s1-l1", "s2-l1"), and a name that still clashes
// gets topology.Build's hashed name.
//
// MergeBelow adds the evidence below a higher-priority source's (the agents' reports, a fabric capture).
package labels

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the source's name: the Source its evidence carries, and its name in logs, metrics and --source-priority.
const Name = wellknown.SourceLabels

// Node labels that give a node's NVLink domain and its rack within it: the clique GPU Feature Discovery writes
// ("<clusterUUID>.<cliqueId>", as the agents report it) and topograph's sub-domain label (also the
// accelerator sub-domain key of hypernodegen's label styles).
const (
	CliqueLabel    = "nvidia.com/gpu.clique"
	SubDomainLabel = wellknown.TopographAcceleratorSubDomainKey
)

// switchKind is the kind of the pseudo-switches' identifiers (see topology.SwitchID).
const switchKind = "label"

// Node is what the source needs of a Kubernetes node: its name and labels.
type Node = nodes.Node

// ValidateKeys returns an error naming the first key that is not a valid Kubernetes label key or that is
// given twice, and an error when there is no key at all.
func ValidateKeys(keys []string) error {
	if len(keys) == 0 {
		return errors.New("no label key given: list the keys from the top of the network down to the leaves")
	}
	for i, k := range keys {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return fmt.Errorf("label key %d (%q) is not a valid label key: %s", i+1, k, strings.Join(msgs, "; "))
		}
		if j := slices.Index(keys[:i], k); j >= 0 {
			return fmt.Errorf("label key %q is given twice (keys %d and %d)", k, j+1, i+1)
		}
	}
	return nil
}

// Evidence returns the evidence that nodes' labels give, keys listing the label keys from the top of the
// tree to the bottom. A node with a value for every key gets one link, to the pseudo-switch of its lowest
// label; each pair of consecutive keys gives a switch link from the lower pseudo-switch to the upper one. A
// pseudo-switch is named by its value, or, when the value occurs under several parents at its level, by its
// parent's name, "-" and the value ("s1-l1", "s2-l1"). A node without the lowest label, with a partial path,
// with an empty or invalid value, or listed more than once is left out and returned as a Problem; nothing is
// guessed. Keys that ValidateKeys refuses give no evidence and one Problem. Nodes and problems are ordered by
// node name and switch links by identifier, so the result does not depend on the order of nodes.
func Evidence(nodes []Node, keys []string) (topology.Input, []topology.Problem) {
	return EvidenceAs(Name, nodes, keys)
}

// EvidenceAs is Evidence for another source that places nodes by a path of values, top first (a cloud's network
// layers), given as labels under keys of its own: the evidence and problems carry source as their Source, and
// its pseudo-switches are identified by the keys and values, so they never meet another source's.
func EvidenceAs(source string, nodes []Node, keys []string) (topology.Input, []topology.Problem) {
	if err := ValidateKeys(keys); err != nil {
		return topology.Input{}, []topology.Problem{{Source: source, Reason: err.Error()}}
	}
	paths, problems := nodePaths(source, nodes, keys)
	names := switchNames(paths)
	var in topology.Input
	edges := map[topology.SwitchEdge]bool{}
	last := len(keys) - 1
	byName := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n.Labels
	}
	for _, p := range paths {
		e := topology.NodeEvidence{Node: p.node, Source: source,
			Links: []topology.SwitchLink{{SwitchID: p.ids[last], SwitchName: names[p.ids[last]]}}}
		// --accelerator-domains needs the NVLink domain and rack the node's labels give.
		if e.NVLinkDomain = byName[p.node][CliqueLabel]; e.NVLinkDomain != "" {
			e.NVLinkSubDomain = byName[p.node][SubDomainLabel]
		}
		in.Nodes = append(in.Nodes, e)
		for lvl := 1; lvl <= last; lvl++ {
			a, b := p.ids[lvl], p.ids[lvl-1]
			edges[topology.SwitchEdge{A: a, B: b, AName: names[a], BName: names[b], Source: source}] = true
		}
	}
	for e := range edges {
		in.SwitchLinks = append(in.SwitchLinks, e)
	}
	slices.SortFunc(in.SwitchLinks, func(a, b topology.SwitchEdge) int {
		return cmp.Or(strings.Compare(a.A, b.A), strings.Compare(a.B, b.B))
	})
	return in, problems
}

// path is a node's place in the labelled tree: its values and pseudo-switches, top key first.
type path struct {
	node        string
	values, ids []string
}

// nodePaths returns the paths of the nodes that can be placed, ordered by node name, and why the others cannot.
func nodePaths(source string, nodes []Node, keys []string) ([]path, []topology.Problem) {
	sorted := slices.Clone(nodes)
	slices.SortStableFunc(sorted, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	var paths []path
	var problems []topology.Problem
	for i, n := range sorted {
		if i > 0 && sorted[i-1].Name == n.Name {
			continue // reported with the first of its entries
		}
		if times := countName(sorted[i:], n.Name); times > 1 {
			problems = append(problems, problem(source, n.Name, fmt.Sprintf("listed %d times; which entry is right cannot be told", times)))
			continue
		}
		values, reason := valuesOf(n.Labels, keys)
		if reason != "" {
			problems = append(problems, problem(source, n.Name, reason))
			continue
		}
		paths = append(paths, path{node: n.Name, values: values, ids: pathIDs(keys, values)})
	}
	return paths, problems
}

// switchNames names every pseudo-switch of paths: its value, qualified by its parent's name where the value
// occurs under several parents at that level.
func switchNames(paths []path) map[string]string {
	parents := map[int]map[string]map[string]bool{} // level → value → parent pseudo-switches
	for _, p := range paths {
		for lvl := 1; lvl < len(p.ids); lvl++ {
			if parents[lvl] == nil {
				parents[lvl] = map[string]map[string]bool{}
			}
			if parents[lvl][p.values[lvl]] == nil {
				parents[lvl][p.values[lvl]] = map[string]bool{}
			}
			parents[lvl][p.values[lvl]][p.ids[lvl-1]] = true
		}
	}
	names := map[string]string{}
	for _, p := range paths {
		for lvl, v := range p.values {
			if lvl > 0 && len(parents[lvl][v]) > 1 {
				v = names[p.ids[lvl-1]] + "-" + v
			}
			names[p.ids[lvl]] = v
		}
	}
	return names
}

// countName counts the leading entries of sorted named name.
func countName(sorted []Node, name string) int {
	n := 0
	for n < len(sorted) && sorted[n].Name == name {
		n++
	}
	return n
}

// valuesOf returns the node's value for each key, or why the node cannot be placed. The lowest key is looked
// at first, so that a node outside the labelled network reads "no label <lowest key>".
func valuesOf(labels map[string]string, keys []string) ([]string, string) {
	lowest := keys[len(keys)-1]
	if _, ok := labels[lowest]; !ok {
		return nil, "no label " + lowest
	}
	values := make([]string, len(keys))
	for i, k := range keys {
		v, ok := labels[k]
		switch {
		case !ok:
			return nil, fmt.Sprintf("no label %s, though it has %s=%s: a partial path would put the node in a wrong tier",
				k, lowest, labels[lowest])
		case v == "":
			return nil, fmt.Sprintf("label %s is empty", k)
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return nil, fmt.Sprintf("label %s has an invalid value %q: %s", k, v, strings.Join(msgs, "; "))
		}
		values[i] = v
	}
	return values, ""
}

// pathIDs gives the pseudo-switch identifier of each level: "label:" and the path from the top key down to
// it, "key=value" pairs joined by commas. Neither "=" nor "," can occur in a label key or value, so distinct
// paths give distinct identifiers.
func pathIDs(keys, values []string) []string {
	ids := make([]string, len(keys))
	var path strings.Builder
	for i, k := range keys {
		if i > 0 {
			path.WriteByte(',')
		}
		path.WriteString(k + "=" + values[i])
		ids[i] = topology.SwitchID(switchKind, path.String())
	}
	return ids
}

// MergeBelow merges label evidence below primary's (reports, a capture), as topology.Merge does: primary's
// nodes are kept as they are and the nodes only the labels place are added. Two things differ.
//
// The pseudo-switches that lead to no added node are left out: a labelled leaf whose nodes primary all places
// would otherwise be reached from above only, be taken for a higher tier and lend its name to a domain there.
//
// Conflicts are found by name, since a pseudo-switch never has a real switch's identifier: a node both place
// is a conflict when primary names its compute switches and none is named like the node's leaf pseudo-switch
// (its lowest label value, qualified only when repeated; compared as topology.SafeName writes them). Where
// primary's switches have no names, nothing is compared. Conflicts are ordered by node name.
func MergeBelow(primary, labelled topology.Input) (topology.Input, []topology.Conflict) {
	merged, _ := topology.Merge(primary, labelled) // its conflicts compare identifiers
	known := map[string]topology.NodeEvidence{}
	for _, n := range primary.Nodes {
		if _, dup := known[n.Node]; !dup {
			known[n.Node] = n
		}
	}
	var conflicts []topology.Conflict
	used := map[string]bool{}
	for _, n := range labelled.Nodes {
		p, placed := known[n.Node]
		if placed {
			if leafNamesDiffer(p, n) {
				conflicts = append(conflicts, topology.Conflict{Node: n.Node, Kept: p.Source, Dropped: n.Source})
			}
			continue
		}
		for _, l := range n.Links {
			used[l.SwitchID] = true
		}
	}
	slices.SortFunc(conflicts, func(a, b topology.Conflict) int { return strings.Compare(a.Node, b.Node) })
	merged.SwitchLinks = slices.Concat(primary.SwitchLinks, reachable(labelled.SwitchLinks, used))
	return merged, conflicts
}

// reachable returns the edges whose lower end is in used or above a switch in used; edges run from the lower
// pseudo-switch (A) to the upper one (B), as Evidence gives them. used is extended on the way.
func reachable(edges []topology.SwitchEdge, used map[string]bool) []topology.SwitchEdge {
	up := map[string][]string{}
	for _, e := range edges {
		up[e.A] = append(up[e.A], e.B)
	}
	queue := slices.Collect(maps.Keys(used))
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, b := range up[s] {
			if !used[b] {
				used[b] = true
				queue = append(queue, b)
			}
		}
	}
	return slices.DeleteFunc(slices.Clone(edges), func(e topology.SwitchEdge) bool { return !used[e.A] })
}

// leafNamesDiffer reports whether p names compute switches and none of them is named like a switch of l.
func leafNamesDiffer(p, l topology.NodeEvidence) bool {
	named := false
	for _, pl := range p.Links {
		if pl.Storage || pl.SwitchName == "" {
			continue
		}
		named = true
		for _, ll := range l.Links {
			if topology.SafeName(pl.SwitchName) == topology.SafeName(ll.SwitchName) {
				return false
			}
		}
	}
	return named
}

func problem(source, node, reason string) topology.Problem {
	return topology.Problem{Node: node, Source: source, Reason: reason}
}
