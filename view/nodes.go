package view

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// NodePlace is one node's place in the tree and the fabricmap labels written on it.
type NodePlace struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Path holds the domains that contain the node, closest first, up to the top; empty without topology.
	Path []PathStep `json:"path,omitempty"`
	// Labels are the node's labels under fabricmap's keys.
	Labels map[string]string `json:"labels,omitempty"`
	// Expected are the tier labels the tree implies where the node's label differs (or is missing).
	Expected map[string]string `json:"expected,omitempty"`
	// NoTopology is true when no domain holds the node.
	NoTopology bool `json:"noTopology,omitempty"`
	// NoNodeObject is true when a domain holds the node but there is no Node object of that name.
	NoNodeObject bool `json:"noNodeObject,omitempty"`
}

// PathStep is one domain on a node's path to the top.
type PathStep struct {
	// Name is the domain's name.
	Name string `json:"name"`
	// Tier is the domain's tier.
	Tier int `json:"tier"`
	// TierName is the human name of the tier.
	TierName string `json:"tierName,omitempty"`
}

// NodePlaces returns the place of every node that has a Node object (nodeLabels: name → its labels) or is in
// t, sorted by name. Only labels under keys are kept; expected (node → key → value, as
// hypernodegen.NodeLabels computes them) marks the tier labels that differ from the tree.
func NodePlaces(t *topology.Tree, nodeLabels map[string]map[string]string, keys []string, expected map[string]map[string]string) []NodePlace {
	domainOf := map[string]string{}
	for name, d := range t.Domains {
		for _, n := range d.Nodes {
			domainOf[n] = name
		}
	}
	names := slices.Collect(maps.Keys(nodeLabels))
	for n := range domainOf {
		if _, ok := nodeLabels[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := make([]NodePlace, 0, len(names))
	for _, n := range names {
		labels, hasObject := nodeLabels[n]
		p := NodePlace{Node: n, NoNodeObject: !hasObject}
		for _, k := range keys {
			if v, ok := labels[k]; ok {
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels[k] = v
			}
		}
		dom, placed := domainOf[n]
		p.NoTopology = !placed
		if placed {
			for _, d := range t.PathFrom(dom) {
				p.Path = append(p.Path, PathStep{Name: d.Name, Tier: d.Tier, TierName: d.TierName})
			}
		}
		for k, want := range expected[n] {
			if hasObject && labels[k] != want {
				if p.Expected == nil {
					p.Expected = map[string]string{}
				}
				p.Expected[k] = want
			}
		}
		out = append(out, p)
	}
	return out
}

// NodesText writes each node with its path to the top and its fabricmap labels, one block per node, and
// then the nodes without topology.
func NodesText(w io.Writer, places []NodePlace) error {
	p := &printer{w: w}
	var unplaced []string
	for _, n := range places {
		switch {
		case n.NoTopology:
			unplaced = append(unplaced, n.Node)
			p.printf("%s: no topology\n", n.Node)
		default:
			steps := make([]string, len(n.Path))
			for i, s := range n.Path {
				steps[i] = fmt.Sprintf("%s (tier %d%s)", s.Name, s.Tier, prefixed(", ", s.TierName))
			}
			note := ""
			if n.NoNodeObject {
				note = "  [no Node object]"
			}
			p.printf("%s: %s%s\n", n.Node, strings.Join(steps, " → "), note)
		}
		for _, k := range slices.Sorted(maps.Keys(n.Labels)) {
			line := "    " + k + "=" + n.Labels[k]
			if want, ok := n.Expected[k]; ok {
				line += "  (tree says " + want + ")"
			}
			p.printf("%s\n", line)
		}
		for _, k := range slices.Sorted(maps.Keys(n.Expected)) {
			if _, ok := n.Labels[k]; !ok {
				p.printf("    %s not set  (tree says %s)\n", k, n.Expected[k])
			}
		}
		if len(n.Labels) == 0 && len(n.Expected) == 0 && !n.NoNodeObject {
			p.printf("    (no fabricmap labels)\n")
		}
	}
	if len(unplaced) > 0 {
		p.printf("nodes without topology (%d): %s\n", len(unplaced), strings.Join(unplaced, ", "))
	}
	return p.err
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
