package view

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/fabricmap/fabricmap/topology"
)

// DOT writes t as a Graphviz digraph: domains as boxes labelled with tier and node count, nodes as ellipses,
// nodes without topology as dashed ellipses on their own.
func DOT(w io.Writer, t *topology.Tree) error {
	p := &printer{w: w, t: t}
	p.printf("digraph fabricmap {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n")
	names := t.Names()
	for _, n := range names {
		d := t.Domains[n]
		label := fmt.Sprintf("%s\ntier %d %s\n%d nodes", n, d.Tier, d.TierName, t.NodeCount(n))
		p.printf("  %s [shape=box, label=%s];\n", strconv.Quote(n), strconv.Quote(label))
	}
	sort.Strings(names)
	for _, n := range names {
		d := t.Domains[n]
		for _, c := range d.Children {
			p.printf("  %s -> %s;\n", strconv.Quote(n), strconv.Quote(c))
		}
		for _, node := range d.Nodes {
			p.printf("  %s [shape=ellipse];\n  %s -> %s;\n", strconv.Quote("node/"+node), strconv.Quote(n), strconv.Quote("node/"+node))
		}
	}
	for _, node := range t.Unplaced {
		p.printf("  %s [shape=ellipse, style=dashed, label=%s];\n", strconv.Quote("node/"+node), strconv.Quote(node+"\nno topology"))
	}
	p.printf("}\n")
	return p.err
}
