package slurm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// Topology names in topology.yaml: the tree (the cluster's default) and the blocks.
const (
	YAMLTreeTopology  = "tree"
	YAMLBlockTopology = "block"
)

// YAML returns topology.yaml (Slurm 25.05 and later; Slurm reads it before topology.conf, which it then
// ignores): a list of two named topologies, YAMLTreeTopology (cluster_default: true; tree.switches, each a
// switch with its children or nodes as hostlists, bottom up as in Tree) and YAMLBlockTopology (block.block_sizes
// and block.blocks, in the order and with the sizes of Block). A partition picks one with Topology=NAME.
//
// The keys are those of topology.yaml(5) as published with Slurm 25.05 (May 2025): per topology "topology"
// (which must come first), "cluster_default" and exactly one of "tree", "block" or "flat"; "switches" with
// "switch", "children" and "nodes"; "block_sizes" and "blocks" with "block" and "nodes". Names and hostlists
// are written as quoted YAML strings. Hosts known only by their HCA's GUID are left out, as Tree leaves them
// out, with its comment line. The same tree always gives the same bytes; errors are those of Tree and
// Block.
func YAML(tree *topology.Tree, sizes []int) ([]byte, error) {
	p, bs, sizes, err := blockPlan(tree, sizes)
	if err != nil {
		return nil, fmt.Errorf("topology.yaml: %w", err)
	}
	t, names := p.tree, p.names
	var b strings.Builder
	b.WriteString("# topology.yaml (Slurm 25.05 and later), written by fabricmap\n")
	b.WriteString(leftOutComment(p.left))
	fmt.Fprintf(&b, "- topology: %s\n  cluster_default: true\n  tree:\n    switches:\n", YAMLTreeTopology)
	for _, name := range bottomUp(t) {
		d := t.Domains[name]
		fmt.Fprintf(&b, "      - switch: %s\n", strconv.Quote(names[name]))
		if len(d.Children) > 0 {
			children := make([]string, len(d.Children))
			for i, c := range d.Children {
				children[i] = names[c]
			}
			fmt.Fprintf(&b, "        children: %s\n", strconv.Quote(Hostlist(children)))
		}
		if len(d.Nodes) > 0 {
			fmt.Fprintf(&b, "        nodes: %s\n", strconv.Quote(Hostlist(d.Nodes)))
		}
	}
	fmt.Fprintf(&b, "- topology: %s\n  cluster_default: false\n  block:\n    block_sizes: [%s]\n    blocks:\n", YAMLBlockTopology, strings.ReplaceAll(joinInts(sizes), ",", ", "))
	for _, bl := range bs {
		fmt.Fprintf(&b, "      - block: %s\n        nodes: %s\n", strconv.Quote(bl.name), strconv.Quote(Hostlist(bl.nodes)))
	}
	return []byte(b.String()), nil
}
