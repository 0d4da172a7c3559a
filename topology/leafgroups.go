package topology

import (
	"slices"
	"strings"
)

// strayLinks are the compute switches of a node cabled to switches of different domains: those of the
// domain it joins, and the others, whose links are rejected.
type strayLinks struct {
	kept, stray []string
}

// leafIndex is the compute side of the fabric with every switch and node numbered, so that grouping the
// leaves hashes no string past the numbering: switches are numbered in identifier order (the smaller number,
// the smaller identifier), nodes in name order, and each node's compute switches are kept, once each and in
// link order, in one flat list; sources holds each node's evidence source. Grouping 50,000 nodes through maps keyed by name grew faster than the fabric
// (the maps outgrow the caches); numbered, it is linear but for the two sorts.
type leafIndex struct {
	// switches are the compute switches' identifiers, sorted; a switch's number is its index here.
	switches []string
	// nodes are the nodes with a compute link, sorted, and the sources of their evidence.
	nodes, sources []string
	// links holds each node's compute switches: those of nodes[i] are links[start[i]:start[i+1]].
	links []int32
	start []int32
}

// newLeafIndex numbers the compute switches and the nodes that reach one (nodes: the evidence sorted by node);
// the others are returned, sorted, as unplaced.
func newLeafIndex(nodes []NodeEvidence) (*leafIndex, []string) {
	links := 0
	for _, e := range nodes {
		links += len(e.Links)
	}
	x := &leafIndex{start: make([]int32, 0, len(nodes)+1), links: make([]int32, 0, links),
		nodes: make([]string, 0, len(nodes)), sources: make([]string, 0, len(nodes))}
	number := map[string]int32{}
	// Neighbours by name mostly reach the same switches in the same link order: the switch the node before
	// reached at the same link is compared before the map is asked.
	var last [16]struct {
		id string
		s  int32
	}
	var unplaced []string
	for _, e := range nodes {
		n := e.Node
		first := len(x.links)
		for k, l := range e.Links {
			if l.Storage {
				continue
			}
			at := &last[min(k, len(last)-1)]
			s := at.s
			if at.id != l.SwitchID || at.id == "" {
				var ok bool
				if s, ok = number[l.SwitchID]; !ok {
					s = int32(len(x.switches))
					number[l.SwitchID] = s
					x.switches = append(x.switches, l.SwitchID)
				}
				at.id, at.s = l.SwitchID, s
			}
			if !slices.Contains(x.links[first:], s) {
				x.links = append(x.links, s)
			}
		}
		if len(x.links) == first {
			unplaced = append(unplaced, n)
			continue
		}
		x.nodes = append(x.nodes, n)
		x.sources = append(x.sources, e.Source)
		x.start = append(x.start, int32(first))
	}
	x.start = append(x.start, int32(len(x.links)))
	// Renumber in identifier order: the smallest number of a group is then its smallest switch.
	order := make([]int32, len(x.switches))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(x.switches[a], x.switches[b]) })
	rank := make([]int32, len(order))
	sorted := make([]string, len(order))
	for r, s := range order {
		rank[s] = int32(r)
		sorted[r] = x.switches[s]
	}
	x.switches = sorted
	for i, s := range x.links {
		x.links[i] = rank[s]
	}
	return x, unplaced
}

// of returns the compute switches of the i-th node.
func (x *leafIndex) of(i int) []int32 { return x.links[x.start[i]:x.start[i+1]] }

// groupLeaves groups the nodes joined by shared compute switches into tier-1 domains, not yet named nor added
// to a tree, ordered by their smallest switch. It also returns the nodes that reach no compute switch, and,
// by node, the links of each node cabled to switches of different domains (see joinedSwitches). nodes is the
// evidence, sorted by node.
func (g *switchGraph) groupLeaves(nodes []NodeEvidence) ([]*Domain, []string, map[string]strayLinks) {
	x, unplaced := newLeafIndex(nodes)
	uf := x.joinedSwitches()
	strays := map[string]strayLinks{}
	leafOf := make([]*Domain, len(x.switches)) // by group (its smallest switch): the domain of its nodes
	var leaves []*Domain
	for i, n := range x.nodes {
		ids := x.of(i)
		best, stray := majorityGroup(uf, ids)
		if stray {
			s := strayLinks{}
			for _, id := range ids {
				if uf.find(id) == best {
					s.kept = append(s.kept, x.switches[id])
				} else {
					s.stray = append(s.stray, x.switches[id])
				}
			}
			strays[n] = s
		}
		d := leafOf[best]
		if d == nil {
			d = &Domain{Tier: 1, TierName: TierName(1)}
			leafOf[best] = d
			leaves = append(leaves, d)
		}
		d.Nodes = append(d.Nodes, n) // in name order: sorted
		d.Source = smallerSource(d.Source, x.sources[i])
	}
	for s, id := range x.switches {
		if d := leafOf[uf.find(int32(s))]; d != nil {
			d.Switches = append(d.Switches, id) // in identifier order: sorted; groups without nodes are left out
		}
	}
	slices.SortFunc(leaves, func(a, b *Domain) int { return strings.Compare(a.Switches[0], b.Switches[0]) })
	return leaves, unplaced, strays
}

// joinedSwitches joins compute switches into the groups that form one leaf domain: two switches join when
// more than half of the hosts of the one with fewer hosts reach both. Rail leaves of a scalable unit share
// (nearly) all their hosts, as do the two switches of a dual-homed pair, so they join even with some cables
// down; a host cabled by mistake to a leaf of another unit shares too few hosts with it to join the two.
//
// Nodes next to each other by name mostly share their switches (the hosts of one rack or unit): a run of nodes
// with the same switches is counted once, times its length, so that the pairs cost per run rather than per node.
func (x *leafIndex) joinedSwitches() numberedSets {
	hosts := make([]int32, len(x.switches))
	shared := map[uint64]int32{}
	count := func(ids []int32, n int32) {
		for k, a := range ids {
			hosts[a] += n
			for _, b := range ids[k+1:] {
				shared[uint64(min(a, b))<<32|uint64(max(a, b))] += n
			}
		}
	}
	var run []int32
	n := int32(0)
	for i := range x.nodes {
		ids := x.of(i)
		if n > 0 && slices.Equal(ids, run) {
			n++
			continue
		}
		count(run, n)
		run, n = ids, 1
	}
	count(run, n)
	uf := newNumberedSets(len(x.switches))
	for pair, n := range shared {
		a, b := int32(pair>>32), int32(uint32(pair))
		if 2*n > min(hosts[a], hosts[b]) {
			uf.union(a, b)
		}
	}
	return uf
}

// majorityGroup returns the group (numberedSets.find) that holds most of a node's switches ids, the first
// link's group on a tie, and whether some of ids are in another group (strays). It allocates nothing for a
// node of up to 16 switches: Build calls it for every node.
func majorityGroup(uf numberedSets, ids []int32) (int32, bool) {
	var buf [16]int32
	roots := buf[:0]
	for _, id := range ids {
		roots = append(roots, uf.find(id))
	}
	// As counting each group's switches in link order, and taking a group when its count passes the best's.
	best, bestN := int32(-1), 0
	for i, r := range roots {
		n := 0
		for _, o := range roots[:i+1] {
			if o == r {
				n++
			}
		}
		if bestN == 0 || n > bestN {
			best, bestN = r, n
		}
	}
	return best, bestN != len(ids)
}

// numberedSets is a union-find over the numbers 0…n-1 whose representative is the smallest number of its set,
// so that the grouping never depends on the order of the unions.
type numberedSets []int32

func newNumberedSets(n int) numberedSets {
	u := make(numberedSets, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

// find returns the representative of i's set.
func (u numberedSets) find(i int32) int32 {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

// union joins the sets of a and b.
func (u numberedSets) union(a, b int32) {
	ra, rb := u.find(a), u.find(b)
	switch {
	case ra < rb:
		u[rb] = ra
	case rb < ra:
		u[ra] = rb
	}
}
