package ufm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// A storage or management rail is a leaf that every host of a rail-optimised fabric reaches through one HCA
// port of its own (the storage HCA, "mlx5_8"), beside the compute rails that keep its scalable units apart.
// Its cables are evidence like any other, so the hosts of all the units it reaches share one leaf, and the
// tree merges units that a job should not span; --ufm-storage-devices keeps them out. Nothing in UFM's answer
// tells a storage rail from a compute one, so the conversion says where it sees one: a leaf that every one of
// its hosts reaches through exactly one port while, without it (and the leaves that reach the very same
// hosts the same way), those hosts fall into two or more groups that share no leaf.

// StorageRail is a leaf that looks like a storage or management rail: it joins groups of hosts that share no
// other leaf, each host through one HCA port.
type StorageRail struct {
	// SwitchID and SwitchName identify the leaf.
	SwitchID, SwitchName string
	// Hosts is the number of nodes that reach it, one HCA port each; Groups the number of groups that share no
	// other leaf that those of them with another leaf fall into without it.
	Hosts, Groups int
	// Devices are the HCA devices the nodes reach it through, sorted, each once ("mlx5_8"); a device that
	// UFM's descriptions do not name is left out.
	Devices []string
}

// Flag is the setting that keeps the leaf's cables out of the compute domains:
// "--ufm-storage-devices=mlx5_8" (with a placeholder when UFM names no device).
func (r StorageRail) Flag() string {
	devices := strings.Join(r.Devices, ",")
	if devices == "" {
		devices = "<HCA device>"
	}
	return "--ufm-storage-devices=" + devices
}

// String names the leaf, its hosts and devices, and the flag that keeps it out of the compute domains.
func (r StorageRail) String() string {
	devices := "devices UFM does not name"
	if len(r.Devices) > 0 {
		devices = strings.Join(r.Devices, ", ")
	}
	return fmt.Sprintf("leaf %q (%s): %d hosts through one HCA port each (%s) join %d groups of hosts that share no other leaf; "+
		"if it is a storage or management rail, pass %s", r.SwitchName, r.SwitchID, r.Hosts, devices, r.Groups, r.Flag())
}

// railUplinks are the compute (not storage) cables of the nodes, for storageRails: which switches each node
// is cabled to, and through which devices.
type railUplinks struct {
	switches []railSwitch   // in the order first cabled
	swIndex  map[string]int // switch ID → its index in switches
	nodes    [][]int        // node index → the indexes of the switches it is cabled to, each once
	nodeOf   map[string]int // node → its index in nodes
}

// railSwitch is one switch of railUplinks: its identity and the nodes cabled to it.
type railSwitch struct {
	id, name string
	nodes    []int      // the indexes of the nodes cabled to it, each once, in the order first cabled
	devices  [][]string // for each of nodes, the devices of its cables to the switch
}

// add records one cable of node to a switch, through HCA device.
func (r *railUplinks) add(node string, l topology.SwitchLink, device string) {
	if r.swIndex == nil {
		r.swIndex, r.nodeOf = map[string]int{}, map[string]int{}
	}
	n, ok := r.nodeOf[node]
	if !ok {
		n = len(r.nodes)
		r.nodeOf[node] = n
		r.nodes = append(r.nodes, nil)
	}
	s, ok := r.swIndex[l.SwitchID]
	if !ok {
		s = len(r.switches)
		r.swIndex[l.SwitchID] = s
		r.switches = append(r.switches, railSwitch{id: l.SwitchID, name: l.SwitchName})
	}
	sw := &r.switches[s]
	k := len(sw.nodes) - 1 // a node's cables come one after the other
	if k < 0 || sw.nodes[k] != n {
		k = slices.Index(sw.nodes, n)
	}
	if k >= 0 {
		sw.devices[k] = append(sw.devices[k], device)
		return
	}
	sw.nodes = append(sw.nodes, n)
	sw.devices = append(sw.devices, []string{device})
	r.nodes[n] = append(r.nodes[n], s)
}

// storageRails returns the leaves that look like storage or management rails (see StorageRail), by switch ID.
// Leaves that reach the very same hosts through one port each are judged together (two storage rails, or the
// compute rails of one scalable unit), so one does not hide the other.
func (r *railUplinks) storageRails() []StorageRail {
	bySet := map[string][]int{} // the sorted hosts of single-port leaves → those leaves
	var keys []string
	for s, sw := range r.switches {
		if len(sw.nodes) < 2 || slices.ContainsFunc(sw.devices, func(d []string) bool { return len(d) != 1 }) {
			continue
		}
		hosts := slices.Sorted(slices.Values(sw.nodes))
		key := fmt.Sprint(hosts)
		if bySet[key] == nil {
			keys = append(keys, key)
		}
		bySet[key] = append(bySet[key], s)
	}
	g := newRailGroups(r)
	var out []StorageRail
	for _, key := range keys {
		leaves := bySet[key]
		hosts := r.switches[leaves[0]].nodes
		groups := g.count(hosts, leaves)
		if groups < 2 {
			continue
		}
		for _, s := range leaves {
			devices := map[string]bool{}
			for _, d := range r.switches[s].devices {
				if d[0] != "" {
					devices[d[0]] = true
				}
			}
			out = append(out, StorageRail{SwitchID: r.switches[s].id, SwitchName: r.switches[s].name, Hosts: len(hosts), Groups: groups,
				Devices: slices.Sorted(maps.Keys(devices))})
		}
	}
	slices.SortFunc(out, func(a, b StorageRail) int { return strings.Compare(a.SwitchID, b.SwitchID) })
	return out
}

// railGroups counts the groups hosts fall into without some leaves, reusing its marks from one count to the
// next: a mark holds the number of the count that set it.
type railGroups struct {
	r                   *railUplinks
	round               int
	removed, swSeen     []int // by switch index
	nodeSeen, nodeInSet []int // by node index
	queue               []int
}

func newRailGroups(r *railUplinks) *railGroups {
	return &railGroups{r: r, removed: make([]int, len(r.switches)), swSeen: make([]int, len(r.switches)),
		nodeSeen: make([]int, len(r.nodes)), nodeInSet: make([]int, len(r.nodes))}
}

// count returns the number of groups the hosts fall into when the leaves are taken away: hosts are in one group
// when a chain of other leaves and hosts joins them; hosts cabled to no other leaf are in none. It walks the
// group of one host after another and stops as soon as one group holds them all, so that a leaf whose hosts
// share another leaf costs little.
func (g *railGroups) count(hosts, leaves []int) int {
	g.round++
	for _, s := range leaves {
		g.removed[s] = g.round
	}
	cabled := 0 // hosts with another leaf
	for _, h := range hosts {
		if slices.ContainsFunc(g.r.nodes[h], func(s int) bool { return g.removed[s] != g.round }) {
			g.nodeInSet[h] = g.round
			cabled++
		}
	}
	groups, seen := 0, 0
	for _, h := range hosts {
		if g.nodeInSet[h] != g.round || g.nodeSeen[h] == g.round {
			continue
		}
		groups++
		g.nodeSeen[h] = g.round
		seen++
		g.queue = append(g.queue[:0], h)
		for len(g.queue) > 0 && seen < cabled {
			n := g.queue[len(g.queue)-1]
			g.queue = g.queue[:len(g.queue)-1]
			for _, s := range g.r.nodes[n] {
				if g.removed[s] == g.round || g.swSeen[s] == g.round {
					continue
				}
				g.swSeen[s] = g.round
				for _, m := range g.r.switches[s].nodes {
					if g.nodeSeen[m] == g.round {
						continue
					}
					g.nodeSeen[m] = g.round
					g.queue = append(g.queue, m)
					if g.nodeInSet[m] == g.round {
						seen++
					}
				}
			}
		}
		if seen == cabled {
			break
		}
	}
	return groups
}
