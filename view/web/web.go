// Package web serves a small read-only web page of the live topology tree: a health strip (sources, conflicts,
// expired reports, nodes without a report, link findings), a search box, a collapsible list of domains with
// their node counts beside a drawn map of the fabric (view.SVG, served as /api/map.svg), the link findings
// worst first, the nodes without topology and the conflicts, and the JSON (/api/tree) the page fetches. Everything the page needs is embedded; it loads
// nothing from elsewhere. The package is a plain http.Handler over a function that returns the current state,
// so the aggregator (or a test) decides where the tree comes from.
package web

import (
	"time"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// State is what the page shows: the last tree, when it was built, and what kept nodes out of it.
type State struct {
	// Tree is the last tree built; nil before the first one.
	Tree *topology.Tree
	// Unplaced are the nodes without topology (no evidence places them).
	Unplaced []string
	// Conflicts are the evidence the tree builder rejected or the sources disagreed about.
	Conflicts []Conflict
	// Updated is when the tree was built; zero before the first one.
	Updated time.Time
	// Nodes are the names of the cluster's Node objects; nil when unknown. A node here that is neither in the
	// tree nor in Unplaced is listed as without topology, with the reason (see Reports and Dropped).
	Nodes []string
	// Reports are the nodes that have a NodeFabricReport; a node of Nodes not here has none.
	Reports []string
	// Expired are the nodes whose agent stopped renewing its heartbeat: their report is still used, for the
	// grace period.
	Expired []string
	// Dropped are the nodes whose agent stayed silent through the grace period too: left out of the tree.
	Dropped []string
	// ExpirySuspended is set while most agents are silent together, when no report expires.
	ExpirySuspended bool
	// Sources are the fabric-wide sources beside the reports, and how their polls fare.
	Sources []SourceHealth
	// Findings are what fabric health found wrong with the links (health.Assess), worst first.
	Findings []health.Finding
	// Gangs are the gangs placed on the tree's nodes, drawn on the map. Nothing fills them yet: the
	// aggregator does not watch pods; the placer's placements are the data meant for them.
	Gangs []view.PlacedGang
}

// SourceHealth is how one fabric-wide source (UFM, a capture, node labels) fares.
type SourceHealth struct {
	// Name names the source.
	Name string `json:"name"`
	// Ready is set once the source has given usable evidence.
	Ready bool `json:"ready"`
	// Stale is set when its last poll failed: its last good evidence (if any) is in use.
	Stale bool `json:"stale"`
	// Error says why the last poll failed; empty when it did not.
	Error string `json:"error,omitempty"`
	// LastSuccess is when it was last read successfully; zero before.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Held counts the nodes it lost at once whose last good evidence stays in use (its shrink guard).
	Held int `json:"held,omitempty"`
}

// Conflict is one piece of evidence that was not used, and why.
type Conflict struct {
	// Node is the node concerned; empty for evidence about switches.
	Node string `json:"node,omitempty"`
	// Source names where the evidence came from.
	Source string `json:"source,omitempty"`
	// Reason says what was wrong.
	Reason string `json:"reason"`
}

// ConflictsFromProblems converts the tree builder's problems into the page's conflicts, through
// topology.Printable: html/template and the page's script escape HTML, not control characters, and a reason
// quotes names from evidence.
func ConflictsFromProblems(problems []topology.Problem) []Conflict {
	out := make([]Conflict, 0, len(problems))
	for _, p := range problems {
		out = append(out, Conflict{Node: topology.Printable(p.Node), Source: topology.Printable(p.Source), Reason: topology.Printable(p.Reason)})
	}
	return out
}
