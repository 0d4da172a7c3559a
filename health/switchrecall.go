package health

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

// SwitchRecall is what one pass leaves the next for finding the switches nodes lost (DetectLostSwitches): the
// switches of the pass's tree and, per node, the switches of its evidence (every source's, together) that the
// tree has. It is compact: each switch identifier is kept once, in a table the next pass's recall shares; a
// node's switches are 32-bit indexes into it and the tree's a bit set. At 50,000 nodes on 8 rails that is
// 1.6 MB of indexes beside the map of node names (whose strings are the evidence's own).
type SwitchRecall struct {
	table *switchTable
	// tree has bit i set when the tree has the switch table.ids[i].
	tree []uint64
	// nodes are each node's switches that the tree has, as indexes into table; a node with none is absent.
	nodes map[string][]uint32
}

// switchTable holds each switch identifier once, with the first name the evidence gave it. Entries are only
// added, so that the recalls that share it keep their meaning; RecallSwitches starts a new one when most of its
// entries are no longer in the tree.
type switchTable struct {
	ids   []string
	names []string
	index map[string]uint32
}

func (t *switchTable) intern(id string) uint32 {
	if i, ok := t.index[id]; ok {
		return i
	}
	i := uint32(len(t.ids))
	t.ids = append(t.ids, id)
	t.names = append(t.names, "")
	t.index[id] = i
	return i
}

// RecallSwitches is the recall of one pass: its tree's switches (every domain's Switches) and the switches each
// node's evidence in inputs (every source's; storage links are left out) names among them. prev is the recall
// of the pass before (nil at the first), whose table it shares while that table holds little besides the
// tree's switches.
func RecallSwitches(prev *SwitchRecall, inputs []topology.Input, tree *topology.Tree) *SwitchRecall {
	if prev != nil {
		r := recallWith(prev.table, inputs, tree)
		if live := r.treeSwitches(); len(r.table.ids) <= 2*live+1024 {
			return r
		}
	}
	return recallWith(&switchTable{index: map[string]uint32{}}, inputs, tree)
}

func recallWith(table *switchTable, inputs []topology.Input, tree *topology.Tree) *SwitchRecall {
	r := &SwitchRecall{table: table}
	if tree != nil {
		for _, d := range tree.Domains {
			for _, s := range d.Switches {
				r.set(table.intern(s))
			}
		}
	}
	total, nodes := 0, 0
	for _, in := range inputs {
		nodes += len(in.Nodes)
		for _, e := range in.Nodes {
			total += len(e.Links)
		}
	}
	r.nodes = make(map[string][]uint32, nodes)
	arena := make([]uint32, 0, total) // one allocation for every node's indexes; a node two sources name grows its own
	for _, in := range inputs {
		for _, e := range in.Nodes {
			have := r.nodes[e.Node]
			start := len(arena)
			for _, l := range e.Links {
				i, ok := table.index[l.SwitchID]
				if l.Storage || !ok || !r.has(i) {
					continue
				}
				if table.names[i] == "" && l.SwitchName != "" {
					table.names[i] = l.SwitchName
				}
				if slices.Contains(have, i) || slices.Contains(arena[start:], i) {
					continue
				}
				if have != nil {
					have = append(have, i)
				} else {
					arena = append(arena, i)
				}
			}
			switch {
			case have != nil:
				r.nodes[e.Node] = have
			case len(arena) > start:
				r.nodes[e.Node] = arena[start:len(arena):len(arena)]
			}
		}
	}
	return r
}

func (r *SwitchRecall) set(i uint32) {
	w := int(i / 64)
	if w >= len(r.tree) {
		r.tree = append(r.tree, make([]uint64, w+1-len(r.tree))...)
	}
	r.tree[w] |= 1 << (i % 64)
}

func (r *SwitchRecall) has(i uint32) bool {
	w := int(i / 64)
	return w < len(r.tree) && r.tree[w]&(1<<(i%64)) != 0
}

func (r *SwitchRecall) treeSwitches() int {
	n := 0
	for _, w := range r.tree {
		n += bits.OnesCount64(w)
	}
	return n
}

// Has reports whether the tree of the pass had the switch id. A nil recall has none.
func (r *SwitchRecall) Has(id string) bool {
	if r == nil {
		return false
	}
	i, ok := r.table.index[id]
	return ok && r.has(i)
}

// gone is the switch of r's table at index i.
func (r *SwitchRecall) gone(i uint32) GoneSwitch {
	return GoneSwitch{ID: r.table.ids[i], Name: r.table.names[i]}
}

// Vanished returns the switches of r's tree absent from next's, sorted by ID; nil when none, which is the usual
// pass: with a shared table it costs one pass over two bit sets. A nil r or next has vanished nothing (there
// is nothing to compare).
func (r *SwitchRecall) Vanished(next *SwitchRecall) []GoneSwitch {
	if r == nil || next == nil {
		return nil
	}
	var out []GoneSwitch
	for w, word := range r.tree {
		if r.table == next.table && w < len(next.tree) {
			word &^= next.tree[w]
		}
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			i := uint32(w*64 + b)
			if r.table == next.table || !next.Has(r.table.ids[i]) {
				out = append(out, r.gone(i))
			}
		}
	}
	slices.SortFunc(out, func(a, b GoneSwitch) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// DetectLostSwitches finds the nodes that lost switches between two passes: each node that cur still places
// (placed: node → its leaf, NodeLeaves of cur's tree) whose evidence in prev named a switch of prev's tree that
// is gone from cur's (Vanished), with those switches, since now. A node whose evidence in cur names as many
// switches it did not name in prev as it lost was re-cabled (its links lead to other switches now): it lost
// nothing. Sorted by node; nil when no switch vanished, whatever the nodes' evidence (the usual pass costs
// Vanished alone).
func DetectLostSwitches(prev, cur *SwitchRecall, placed map[string]string, now time.Time) []LostSwitch {
	vanished := prev.Vanished(cur)
	if len(vanished) == 0 {
		return nil
	}
	gone := make(map[string]bool, len(vanished))
	for _, g := range vanished {
		gone[g.ID] = true
	}
	var out []LostSwitch
	for n, had := range prev.nodes {
		if _, ok := placed[n]; !ok {
			continue
		}
		var lost []GoneSwitch
		for _, i := range had {
			if gone[prev.table.ids[i]] {
				lost = append(lost, prev.gone(i))
			}
		}
		if len(lost) == 0 || prev.gained(n, cur) >= len(lost) {
			continue
		}
		slices.SortFunc(lost, func(a, b GoneSwitch) int { return strings.Compare(a.ID, b.ID) })
		out = append(out, LostSwitch{Node: n, Switches: lost, Since: now})
	}
	slices.SortFunc(out, func(a, b LostSwitch) int { return cmp.Compare(a.Node, b.Node) })
	return out
}

// gained counts the switches node n's evidence names in next and did not in r.
func (r *SwitchRecall) gained(n string, next *SwitchRecall) int {
	had := make(map[string]bool, len(r.nodes[n]))
	for _, i := range r.nodes[n] {
		had[r.table.ids[i]] = true
	}
	count := 0
	for _, i := range next.nodes[n] {
		if !had[next.table.ids[i]] {
			count++
		}
	}
	return count
}
