package slurm

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// block is one block of the block plugin: its Slurm name and its nodes.
type block struct {
	name  string
	nodes []string
}

// blocks returns the tree's blocks, sorted by name: each NVLink domain where the tree has them (an accelerator
// domain; the racks of a multi-rack one, its sub-domains, are one block with it), else each lowest switch
// domain that holds nodes (the leaf).
func blocks(t *topology.Tree, names map[string]string) []block {
	byName := map[string]*block{}
	for _, name := range t.Names() {
		d := t.Domains[name]
		if len(d.Nodes) == 0 {
			continue
		}
		owner := name
		if d.TierName == topology.TierNameAcceleratorSubDomain && d.Parent != "" {
			owner = d.Parent
		}
		b := byName[owner]
		if b == nil {
			b = &block{name: names[owner]}
			byName[owner] = b
		}
		b.nodes = append(b.nodes, d.Nodes...)
	}
	out := make([]block, 0, len(byName))
	for _, b := range byName {
		slices.Sort(b.nodes)
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b block) int { return strings.Compare(a.name, b.name) })
	return out
}

// ValidateBlockSizes checks block sizes as Slurm defines them: the first is the base block size, each other
// one the base times a power of two, rising. None is valid (the sizes are then derived from the tree).
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
	}
	return nil
}

// blockSizes returns sizes when given (checked against the blocks: the base must fit one), else the sizes
// derived from the blocks: the smallest block's node count D, then 2D, 4D, … up to D times the largest power of
// two not above the number of blocks (Slurm's planning base block and the aggregates of 2, 4, … of them).
func blockSizes(bs []block, sizes []int) ([]int, error) {
	if err := ValidateBlockSizes(sizes); err != nil {
		return nil, err
	}
	smallest, largest := len(bs[0].nodes), 0
	for _, b := range bs {
		smallest, largest = min(smallest, len(b.nodes)), max(largest, len(b.nodes))
	}
	if len(sizes) > 0 {
		if sizes[0] > largest {
			return nil, fmt.Errorf("%s: the base block size %d is larger than every block (the largest holds %d nodes)", joinInts(sizes), sizes[0], largest)
		}
		return sizes, nil
	}
	out := []int{smallest}
	for n := 2; n <= len(bs); n *= 2 {
		out = append(out, smallest*n)
	}
	return out, nil
}

// Block returns topology.conf for TopologyPlugin=topology/block: one BlockName=NAME Nodes=HOSTLIST line per
// block (see blocks), sorted by name, and a BlockSizes= line: sizes when given (see ValidateBlockSizes), else
// derived from the tree (see blockSizes). Slurm plans in base blocks: a block with more nodes than the base
// size is written whole. An empty or invalid tree, a node name Slurm refuses or invalid sizes give an error.
func Block(t *topology.Tree, sizes []int) ([]byte, error) {
	bs, sizes, err := blockPlan(t, sizes)
	if err != nil {
		return nil, fmt.Errorf("topology.conf (block): %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# topology.conf for TopologyPlugin=topology/block, written by fabricmap: %d blocks, %d nodes\n", len(bs), nodeCount(t))
	for _, bl := range bs {
		fmt.Fprintf(&b, "BlockName=%s Nodes=%s\n", bl.name, Hostlist(bl.nodes))
	}
	fmt.Fprintf(&b, "BlockSizes=%s\n", joinInts(sizes))
	return []byte(b.String()), nil
}

// blockPlan is the blocks and block sizes of a tree, for Block and YAML.
func blockPlan(t *topology.Tree, sizes []int) ([]block, []int, error) {
	if err := checkTree(t); err != nil {
		return nil, nil, err
	}
	names, err := switchNames(t)
	if err != nil {
		return nil, nil, err
	}
	bs := blocks(t, names)
	if len(bs) == 0 {
		return nil, nil, fmt.Errorf("no domain of the tree holds nodes")
	}
	sizes, err = blockSizes(bs, sizes)
	if err != nil {
		return nil, nil, err
	}
	return bs, sizes, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
