package slurm

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// maxBlockLevel is the highest block level Slurm takes: every block size is the base times 2^level, and
// slurmctld stops with "Invalid BlockSizes value" above level 15 (topology/block, block_record.c).
const maxBlockLevel = 15

// block is one block of the block plugin: its Slurm name and its nodes.
type block struct {
	name  string
	nodes []string
}

// blocks returns the tree's blocks in the tree's order: a walk from the roots down, children by name, so that
// blocks behind one switch stand next to each other. The order matters to Slurm: it builds its higher-level
// blocks (BlockSizes beyond the base) by pairing blocks that are contiguous in the file, so the pairs, fours, …
// it forms are then, as far as the tree allows, the blocks that share a spine. A block is each NVLink domain
// where the tree has them (an accelerator domain; its sub-domains, the racks of a multi-rack domain, are in the
// one block), else each domain that holds nodes (the lowest switch domain, a leaf).
func blocks(t *topology.Tree, names map[string]string) []block {
	var out []block
	var walk func(name string)
	walk = func(name string) {
		d := t.Domains[name]
		if d.TierName == topology.TierNameAccelerator || len(d.Children) == 0 {
			if nodes := nodesUnder(t, name); len(nodes) > 0 {
				out = append(out, block{name: names[name], nodes: nodes})
			}
			return
		}
		for _, c := range slices.Sorted(slices.Values(d.Children)) {
			walk(c)
		}
	}
	for _, r := range t.Roots() {
		walk(r)
	}
	return out
}

// nodesUnder returns the nodes at or below the named domain, sorted.
func nodesUnder(t *topology.Tree, name string) []string {
	var out []string
	var walk func(string)
	walk = func(n string) {
		d := t.Domains[n]
		out = append(out, d.Nodes...)
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(name)
	slices.Sort(out)
	return out
}

// ValidateBlockSizes checks block sizes as Slurm's topology.conf(5) defines BlockSizes: the first is the planning
// base block size, every other one the base times a power of two (at most 2^15, slurmctld's limit), rising.
// None is valid (the sizes are then derived from the tree, see Block). Whether the base fits the tree's blocks
// is checked where the tree is known (Block, YAML).
func ValidateBlockSizes(sizes []int) error {
	if len(sizes) == 0 {
		return nil
	}
	base := sizes[0]
	if base <= 0 {
		return fmt.Errorf("%s: the base block size %d is not positive", joinInts(sizes), base)
	}
	for i, s := range sizes[1:] {
		if s <= sizes[i] {
			return fmt.Errorf("%s: %d does not rise above %d", joinInts(sizes), s, sizes[i])
		}
		if s%base != 0 || bits.OnesCount(uint(s/base)) != 1 {
			return fmt.Errorf("%s: %d is not %d times a power of two", joinInts(sizes), s, base)
		}
		if s/base > 1<<maxBlockLevel {
			return fmt.Errorf("%s: %d is %d times the base %d, Slurm takes at most %d", joinInts(sizes), s, s/base, base, 1<<maxBlockLevel)
		}
	}
	return nil
}

// blockSizes returns sizes when given, checked against the blocks, else the sizes derived from them.
//
// Given sizes: slurmctld stops ("children count lower than bblock_node_cnt") when a block holds fewer nodes than
// the base block size (topology.conf(5): "Each block must have at least the planning base block size count of
// nodes"), so such a base is refused, naming the smallest block. A block larger than the base is allowed and
// written whole; Slurm plans in base-size units within it. Sizes above what the blocks can make are allowed too
// (Slurm ignores the levels beyond its number of blocks).
//
// Derived sizes: the smallest block's node count D (so every block has at least the base), then 2D, 4D, … up
// to D times the largest power of two not above the number of blocks (the higher-level blocks Slurm can form
// from them), and never above level 15.
func blockSizes(bs []block, sizes []int) ([]int, error) {
	if err := ValidateBlockSizes(sizes); err != nil {
		return nil, err
	}
	smallest := bs[0]
	for _, b := range bs {
		if len(b.nodes) < len(smallest.nodes) || len(b.nodes) == len(smallest.nodes) && b.name < smallest.name {
			smallest = b
		}
	}
	if len(sizes) > 0 {
		if sizes[0] > len(smallest.nodes) {
			return nil, fmt.Errorf("block %s holds %d nodes, fewer than the base block size %d (slurmctld refuses a block below the base)",
				smallest.name, len(smallest.nodes), sizes[0])
		}
		return sizes, nil
	}
	d := len(smallest.nodes)
	out := []int{d}
	for n := 2; n <= len(bs) && n <= 1<<maxBlockLevel; n *= 2 {
		out = append(out, d*n)
	}
	return out, nil
}

// Block returns topology.conf for TopologyPlugin=topology/block (topology.conf(5), section topology/block): one
// BlockName=NAME Nodes=HOSTLIST line per block, in the tree's order (see blocks), and a BlockSizes= line: sizes
// when given (see ValidateBlockSizes; the base may not exceed the smallest block), else derived from the tree
// (see blockSizes). Hosts known only by their HCA's GUID are left out, as Tree leaves them out, with its
// comment line. The same tree always gives the same bytes. An empty or invalid tree, a node name Slurm
// refuses or invalid sizes give an error and no file.
func Block(t *topology.Tree, sizes []int) ([]byte, error) {
	p, bs, sizes, err := blockPlan(t, sizes)
	if err != nil {
		return nil, fmt.Errorf("topology.conf (block): %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# topology.conf for TopologyPlugin=topology/block, written by fabricmap: %d blocks, %d nodes\n", len(bs), nodeCount(p.tree))
	b.WriteString(leftOutComment(p.left))
	for _, bl := range bs {
		fmt.Fprintf(&b, "BlockName=%s Nodes=%s\n", bl.name, Hostlist(bl.nodes))
	}
	fmt.Fprintf(&b, "BlockSizes=%s\n", joinInts(sizes))
	return []byte(b.String()), nil
}

// blockPlan is the prepared tree (prepare), its blocks and block sizes, for Block and YAML.
func blockPlan(t *topology.Tree, sizes []int) (prepared, []block, []int, error) {
	p, err := prepare(t)
	if err != nil {
		return prepared{}, nil, nil, err
	}
	bs := blocks(p.tree, p.names)
	if len(bs) == 0 {
		return prepared{}, nil, nil, fmt.Errorf("no domain of the tree holds nodes")
	}
	sizes, err = blockSizes(bs, sizes)
	if err != nil {
		return prepared{}, nil, nil, err
	}
	return p, bs, sizes, nil
}

// joinInts writes v as Slurm lists numbers: comma-separated.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
