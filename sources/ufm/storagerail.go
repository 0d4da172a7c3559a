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

// railUplinks are the compute (not storage) cables of the nodes, for storageRails: by switch, each node's
// devices, one per cable.
type railUplinks struct {
	bySwitch map[string]map[string][]string // switch ID → node → the devices of its cables to it
	names    map[string]string              // switch ID → name
	byNode   map[string][]string            // node → the IDs of the switches it is cabled to
}

// add records one cable of node to a switch, through HCA device.
func (r *railUplinks) add(node string, l topology.SwitchLink, device string) {
	if r.bySwitch == nil {
		r.bySwitch, r.names, r.byNode = map[string]map[string][]string{}, map[string]string{}, map[string][]string{}
	}
	hosts := r.bySwitch[l.SwitchID]
	if hosts == nil {
		hosts = map[string][]string{}
		r.bySwitch[l.SwitchID] = hosts
		r.names[l.SwitchID] = l.SwitchName
	}
	if len(hosts[node]) == 0 {
		r.byNode[node] = append(r.byNode[node], l.SwitchID)
	}
	hosts[node] = append(hosts[node], device)
}

// storageRails returns the leaves that look like storage or management rails (see StorageRail), by switch ID.
// Leaves that reach the very same hosts through one port each are judged together (two storage rails, or the
// compute rails of one scalable unit), so one does not hide the other.
func (r *railUplinks) storageRails() []StorageRail {
	bySet := map[string][]string{} // the sorted hosts of single-port leaves → those leaves
	for _, id := range slices.Sorted(maps.Keys(r.bySwitch)) {
		hosts := r.bySwitch[id]
		if len(hosts) < 2 || slices.ContainsFunc(slices.Collect(maps.Values(hosts)), func(d []string) bool { return len(d) != 1 }) {
			continue
		}
		key := strings.Join(slices.Sorted(maps.Keys(hosts)), "\n")
		bySet[key] = append(bySet[key], id)
	}
	var out []StorageRail
	for _, leaves := range bySet {
		hosts := slices.Sorted(maps.Keys(r.bySwitch[leaves[0]]))
		groups := r.groupsWithout(hosts, leaves)
		if groups < 2 {
			continue
		}
		for _, id := range leaves {
			devices := map[string]bool{}
			for _, d := range r.bySwitch[id] {
				if d[0] != "" {
					devices[d[0]] = true
				}
			}
			out = append(out, StorageRail{SwitchID: id, SwitchName: r.names[id], Hosts: len(hosts), Groups: groups,
				Devices: slices.Sorted(maps.Keys(devices))})
		}
	}
	slices.SortFunc(out, func(a, b StorageRail) int { return strings.Compare(a.SwitchID, b.SwitchID) })
	return out
}

// groupsWithout counts the groups the given hosts fall into when the leaves are taken away: hosts are in one
// group when a chain of leaves and hosts joins them; hosts cabled to no other leaf are in none.
func (r *railUplinks) groupsWithout(hosts, leaves []string) int {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		root := find(p)
		parent[x] = root
		return root
	}
	for node, switches := range r.byNode {
		for _, sw := range switches {
			if !slices.Contains(leaves, sw) {
				a, b := find("node\n"+node), find("switch\n"+sw)
				if a != b {
					parent[a] = b
				}
			}
		}
	}
	roots := map[string]bool{}
	for _, h := range hosts {
		if slices.ContainsFunc(r.byNode[h], func(sw string) bool { return !slices.Contains(leaves, sw) }) {
			roots[find("node\n"+h)] = true
		}
	}
	return len(roots)
}
