// Package web serves a small read-only web page of the live topology tree: a collapsible tree of domains with
// their node counts, the nodes without topology and the conflicts, and the JSON (/api/tree) the page fetches.
// Everything the page needs is embedded; it loads nothing from elsewhere. The package is a plain
// http.Handler over a function that returns the current state, so the aggregator (or a test) decides where
// the tree comes from.
package web

import (
	"time"

	"github.com/fabricmap/fabricmap/topology"
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
