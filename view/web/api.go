package web

import (
	"cmp"
	"slices"
	"time"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// TreeJSON is the body of /api/tree.
type TreeJSON struct {
	// Ready is false until a tree has been built (the aggregator has not reconciled yet, or is no leader).
	Ready bool `json:"ready"`
	// Updated is when the tree was built, RFC 3339; empty before the first one.
	Updated string `json:"updated,omitempty"`
	// NodeCount is the number of nodes placed in the tree.
	NodeCount int `json:"nodeCount"`
	// DomainCount is the number of domains.
	DomainCount int `json:"domainCount"`
	// Roots are the top domains, each with everything below it.
	Roots []DomainJSON `json:"roots"`
	// Unplaced are the nodes with a report but without topology (no evidence places them), sorted.
	Unplaced []string `json:"unplaced"`
	// Missing are the cluster's other nodes without a place in the tree, and why, sorted.
	Missing []MissingNode `json:"missing"`
	// NodesKnown is set when the cluster's nodes are known, so that Missing is complete.
	NodesKnown bool `json:"nodesKnown"`
	// Conflicts are the evidence that was not used.
	Conflicts []Conflict `json:"conflicts"`
	// Health is the state of the sources and of the agents' heartbeats.
	Health HealthJSON `json:"health"`
	// Gangs are the gangs placed on the tree's nodes (none until something fills State.Gangs).
	Gangs []view.PlacedGang `json:"gangs"`
}

// Why a node of the cluster has no place in the tree (MissingNode.Reason).
const (
	// ReasonNoReport: the node has no NodeFabricReport (no agent runs there, or it has not reported yet).
	ReasonNoReport = "no-report"
	// ReasonReportDropped: its agent stayed silent past the report expiry and the grace period.
	ReasonReportDropped = "report-dropped"
	// ReasonReportUnusable: its report cannot be used and there is no earlier good evidence.
	ReasonReportUnusable = "report-unusable"
)

// MissingNode is a node of the cluster that is neither in the tree nor among the unplaced.
type MissingNode struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Reason is ReasonNoReport, ReasonReportDropped or ReasonReportUnusable.
	Reason string `json:"reason"`
}

// HealthJSON is what the page's health strip shows.
type HealthJSON struct {
	// Sources are the fabric-wide sources beside the reports.
	Sources []SourceHealth `json:"sources"`
	// Expired are the nodes whose report expired but is still used, sorted.
	Expired []string `json:"expired"`
	// Dropped are the nodes whose report expired and was left out of the tree, sorted.
	Dropped []string `json:"dropped"`
	// ExpirySuspended is set while most agents are silent together, when no report expires.
	ExpirySuspended bool `json:"expirySuspended"`
	// Findings are what fabric health found wrong with the links, worst first (severity 3 critical, 2
	// warning, 1 info).
	Findings []health.Finding `json:"findings"`
}

// DomainJSON is one domain and everything below it.
type DomainJSON struct {
	// Name is the domain's name (also its HyperNode's).
	Name string `json:"name"`
	// Tier is 1 for the closest domains and grows upward.
	Tier int `json:"tier"`
	// TierName is the human name of the tier (leaf, spine, …).
	TierName string `json:"tierName,omitempty"`
	// Source names the evidence the domain came from.
	Source string `json:"source,omitempty"`
	// Switches are the identifiers of the switches the domain stands for.
	Switches []string `json:"switches,omitempty"`
	// NVLinkDomain is the NVLink domain an accelerator domain stands for.
	NVLinkDomain string `json:"nvlinkDomain,omitempty"`
	// NodeCount is the number of nodes at or below the domain.
	NodeCount int `json:"nodeCount"`
	// Children are the domains directly below.
	Children []DomainJSON `json:"children"`
	// Nodes are the nodes directly in the domain.
	Nodes []string `json:"nodes"`
}

// treeJSON converts s into the JSON the page reads. A parent chain that loops is cut where it repeats.
func treeJSON(s State) TreeJSON {
	out := TreeJSON{Roots: []DomainJSON{}, Unplaced: sorted(s.Unplaced), Missing: []MissingNode{}, Conflicts: []Conflict{},
		NodesKnown: s.Nodes != nil, Gangs: []view.PlacedGang{},
		Health: HealthJSON{Sources: []SourceHealth{}, Expired: sorted(s.Expired), Dropped: sorted(s.Dropped), ExpirySuspended: s.ExpirySuspended,
			Findings: worstFirst(s.Findings)}}
	if len(s.Conflicts) > 0 {
		out.Conflicts = s.Conflicts
	}
	if len(s.Sources) > 0 {
		out.Health.Sources = s.Sources
	}
	if len(s.Gangs) > 0 {
		out.Gangs = s.Gangs
	}
	out.Missing = missing(s)
	if s.Tree == nil {
		return out
	}
	out.Ready = true
	if !s.Updated.IsZero() {
		out.Updated = s.Updated.UTC().Format(time.RFC3339)
	}
	out.DomainCount = len(s.Tree.Domains)
	seen := map[string]bool{}
	for _, r := range s.Tree.Roots() {
		d := domainJSON(s.Tree, r, seen)
		out.NodeCount += d.NodeCount
		out.Roots = append(out.Roots, d)
	}
	return out
}

// missing lists the cluster's nodes that are neither in the tree nor unplaced, with the reason. Without a
// tree there is nothing to compare with, so nothing is listed.
func missing(s State) []MissingNode {
	out := []MissingNode{}
	if s.Tree == nil || s.Nodes == nil {
		return out
	}
	known := map[string]bool{}
	for _, d := range s.Tree.Domains {
		for _, n := range d.Nodes {
			known[n] = true
		}
	}
	for _, n := range s.Unplaced {
		known[n] = true
	}
	reported, dropped := set(s.Reports), set(s.Dropped)
	for _, n := range sorted(s.Nodes) {
		switch {
		case known[n]:
		case dropped[n]:
			out = append(out, MissingNode{Node: n, Reason: ReasonReportDropped})
		case reported[n]:
			out = append(out, MissingNode{Node: n, Reason: ReasonReportUnusable})
		default:
			out = append(out, MissingNode{Node: n, Reason: ReasonNoReport})
		}
	}
	return out
}

func domainJSON(t *topology.Tree, name string, seen map[string]bool) DomainJSON {
	seen[name] = true
	d := t.Domains[name]
	out := DomainJSON{Name: d.Name, Tier: d.Tier, TierName: d.TierName, Source: d.Source, Switches: d.Switches,
		NVLinkDomain: d.NVLinkDomain, Children: []DomainJSON{}, Nodes: append([]string{}, d.Nodes...)}
	slices.SortFunc(out.Nodes, view.NaturalCompare) // gpu-9 before gpu-10
	out.NodeCount = len(d.Nodes)
	for _, c := range slices.SortedFunc(slices.Values(d.Children), view.NaturalCompare) { // su2 before su10

		if _, ok := t.Domains[c]; !ok || seen[c] {
			continue
		}
		child := domainJSON(t, c, seen)
		out.NodeCount += child.NodeCount
		out.Children = append(out.Children, child)
	}
	return out
}

// worstFirst returns a copy of findings, the most severe first (their order kept within a severity), through
// topology.Printable: empty (not nil) when there are none.
func worstFirst(findings []health.Finding) []health.Finding {
	out := make([]health.Finding, 0, len(findings))
	for _, f := range findings {
		f.Node, f.Domain, f.Port, f.Message = topology.Printable(f.Node), topology.Printable(f.Domain), topology.Printable(f.Port), topology.Printable(f.Message)
		f.Switches = slices.Clone(f.Switches)
		for i, sw := range f.Switches {
			f.Switches[i] = topology.Printable(sw)
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b health.Finding) int { return cmp.Compare(b.Severity, a.Severity) })
	return out
}

// sorted returns a sorted copy of names, empty (not nil) when there are none: the page reads lists, not nulls.
func sorted(names []string) []string {
	if len(names) == 0 {
		return []string{}
	}
	return slices.Sorted(slices.Values(names))
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
