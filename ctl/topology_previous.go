package ctl

import (
	"fmt"
	"io"
	"slices"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/wording"
	"github.com/fabricmap/fabricmap/topology"
)

// warnVanished writes a warning line on errw for each switch of prev (the tree of the HyperNodes --previous
// FILE holds) that is gone from tree (the one inferred now), as the aggregator's switch-lost findings do: the
// switch, the lowest HyperNode that stood for it, and the nodes that HyperNode held (and the ones below it)
// that tree still places: they are short of the switch. Offline there is no per-node evidence of before, so
// these are the HyperNode's nodes (in a rail-optimised unit, each host is cabled to every rail leaf).
func warnVanished(errw io.Writer, path string, prev, tree *topology.Tree) {
	if prev == nil {
		return
	}
	before := health.RecallSwitches(nil, nil, prev)
	vanished := before.Vanished(health.RecallSwitches(before, nil, tree))
	if len(vanished) == 0 {
		return
	}
	placed := health.NodeLeaves(tree)
	for _, g := range vanished {
		d := lowestWith(prev, g.ID)
		var short []string
		for _, n := range nodesBelow(prev, d) {
			if _, ok := placed[n]; ok {
				short = append(short, n)
			}
		}
		if len(short) == 0 {
			fmt.Fprintf(errw, "warning: --previous %s: switch %s is gone from the fabric; no node of HyperNode %s, which stood for it, stays placed\n",
				path, topology.Printable(g.String()), topology.Printable(d.Name))
			continue
		}
		fmt.Fprintf(errw, "warning: --previous %s: switch %s is gone from the fabric; %d %s of HyperNode %s, which stood for it, %s placed and short of it: %s\n",
			path, topology.Printable(g.String()), len(short), wording.Plural(len(short), "node", "nodes"), topology.Printable(d.Name),
			wording.Plural(len(short), "stays", "stay"), topology.Printable(wording.Head(short, 10)))
	}
}

// lowestWith is the domain of t of the lowest tier (then first by name) that stands for switch id; t has one,
// as id is one of its switches.
func lowestWith(t *topology.Tree, id string) *topology.Domain {
	var best *topology.Domain
	for _, d := range t.Domains {
		if !slices.Contains(d.Switches, id) {
			continue
		}
		if best == nil || d.Tier < best.Tier || (d.Tier == best.Tier && d.Name < best.Name) {
			best = d
		}
	}
	return best
}

// nodesBelow lists the nodes of d and of the domains below it in t, sorted.
func nodesBelow(t *topology.Tree, d *topology.Domain) []string {
	var out []string
	var walk func(*topology.Domain)
	walk = func(d *topology.Domain) {
		out = append(out, d.Nodes...)
		for _, c := range d.Children {
			if cd, ok := t.Domains[c]; ok {
				walk(cd)
			}
		}
	}
	walk(d)
	slices.Sort(out)
	return slices.Compact(out)
}
