package web

import (
	"slices"
	"time"

	"github.com/fabricmap/fabricmap/topology"
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
	// Unplaced are the nodes without topology, sorted.
	Unplaced []string `json:"unplaced"`
	// Conflicts are the evidence that was not used.
	Conflicts []Conflict `json:"conflicts"`
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
	// NodeCount is the number of nodes at or below the domain.
	NodeCount int `json:"nodeCount"`
	// Children are the domains directly below.
	Children []DomainJSON `json:"children"`
	// Nodes are the nodes directly in the domain.
	Nodes []string `json:"nodes"`
}

// treeJSON converts s into the JSON the page reads. A parent chain that loops is cut where it repeats.
func treeJSON(s State) TreeJSON {
	out := TreeJSON{Roots: []DomainJSON{}, Unplaced: []string{}, Conflicts: []Conflict{}}
	if len(s.Unplaced) > 0 {
		out.Unplaced = slices.Sorted(slices.Values(s.Unplaced))
	}
	if len(s.Conflicts) > 0 {
		out.Conflicts = s.Conflicts
	}
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

func domainJSON(t *topology.Tree, name string, seen map[string]bool) DomainJSON {
	seen[name] = true
	d := t.Domains[name]
	out := DomainJSON{Name: d.Name, Tier: d.Tier, TierName: d.TierName, Source: d.Source,
		Children: []DomainJSON{}, Nodes: append([]string{}, d.Nodes...)}
	out.NodeCount = len(d.Nodes)
	for _, c := range d.Children {
		if _, ok := t.Domains[c]; !ok || seen[c] {
			continue
		}
		child := domainJSON(t, c, seen)
		out.NodeCount += child.NodeCount
		out.Children = append(out.Children, child)
	}
	return out
}
