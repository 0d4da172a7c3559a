package rdma

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Mellanox/rdmamap"
	"golang.org/x/sys/unix"

	"github.com/fabricmap/fabricmap/discovery/pciaddr"
)

// view is where the probe learns what rdmamap knows: the node's RDMA devices, the RDMA devices that sit on a
// bus device (a PCI function, or an auxiliary device such as an mlx5 sub-function), each device's character
// devices and each port's counters.
//
// rdmamap reads the fixed paths of /sys, so the probe asks it only when its root is the node's own sysfs
// (live): /sys itself, or another mount of sysfs such as the host's at /host/sys in the agent's pod. A fixture
// tree elsewhere is not what rdmamap sees: the probe then lists the devices, and the devices of a bus device,
// from the tree itself, and has no counters and no character devices (they come from rdmamap alone). Tests
// that need them mount a fixture at /sys in a private mount namespace (rdmatest), as the agent meets sysfs.
type view struct {
	root string
	live bool
}

// newView is the view of root.
func newView(root string) view {
	return view{root: root, live: isLiveSysfs(root)}
}

// isLiveSysfs tells whether root is the node's own sysfs: /sys, or a mount of sysfs.
func isLiveSysfs(root string) bool {
	if filepath.Clean(root) == DefaultSysfsRoot {
		return true
	}
	var st unix.Statfs_t
	return unix.Statfs(root, &st) == nil && st.Type == unix.SYSFS_MAGIC
}

// deviceNames lists the node's RDMA devices. notApplicable is set when there are none; err when
// <root>/class/infiniband exists but cannot be listed. rdmamap's list is used when it has one; it cannot say
// why it has none (it lists nothing for a missing and for an unreadable folder alike), so the folder itself
// is read then.
func (v view) deviceNames() (names []string, notApplicable string, err error) {
	if v.live {
		if names := rdmamap.GetRdmaDeviceList(); len(names) > 0 {
			return names, "", nil
		}
	}
	classDir := filepath.Join(v.root, "class", "infiniband")
	entries, err := os.ReadDir(classDir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil, "no RDMA devices under " + classDir, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("cannot list %s: %s", classDir, errText(err))
	}
	names = make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, "", nil
}

// rdmaDevicesOf lists the RDMA devices that sit on a bus device: a PCI function ("0000:18:00.0"), or an
// auxiliary device ("mlx5_core.sf.4").
func (v view) rdmaDevicesOf(busDevice string) []string {
	bus := "auxiliary"
	if pciaddr.IsFunction(busDevice) {
		bus = "pci"
	}
	if v.live {
		if bus == "pci" {
			return rdmamap.GetRdmaDevicesForPcidev(busDevice)
		}
		return rdmamap.GetRdmaDevicesForAuxdev(busDevice)
	}
	ents, err := os.ReadDir(filepath.Join(v.root, "bus", bus, "devices", busDevice, "infiniband"))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// charDevices lists a device's character devices under /dev/infiniband by name (issm0, umad0, uverbs0), in
// name order: what the ibnetdiscover probe (umad) and verbs users (uverbs) need in their container. The
// node-wide rdma_cm is left out. None on a fixture tree.
func (v view) charDevices(dev string) []string {
	if !v.live {
		return nil
	}
	var names []string
	for _, p := range rdmamap.GetRdmaCharDevices(dev) {
		if n := filepath.Base(p); n != "rdma_cm" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// portCounters reads the counters of every port of dev (counters/ and hw_counters/, by file name; a name in
// both keeps the counters/ value), by port number. nil on a fixture tree, or when rdmamap cannot list the
// device's ports. ports are the port numbers the probe found: rdmamap v1.1.0 drops a port's counters/ when it
// has no hw_counters/ (older drivers), so such a port's counters/ is asked for alone.
//
// rdmamap reads a counter that fails (or does not parse) as 0; the judge takes a counter that goes back as a
// new start, so a failed read costs one comparison and never raises an alarm.
func (v view) portCounters(dev string, ports []int) map[int]map[string]uint64 {
	if !v.live {
		return nil
	}
	stats, err := rdmamap.GetRdmaSysfsAllPortsStats(dev)
	if err != nil {
		return nil
	}
	out := make(map[int]map[string]uint64, len(ports))
	for _, ps := range stats.PortStats {
		if ps.Port > 0 && (len(ps.Stats) > 0 || len(ps.HwStats) > 0) {
			out[ps.Port] = counterValues(ps)
		}
	}
	for _, n := range ports {
		if _, ok := out[n]; ok {
			continue
		}
		if st, err := rdmamap.GetRdmaSysfsStats(dev, n); err == nil && len(st) > 0 {
			out[n] = counterValues(rdmamap.RdmaPortStats{Port: n, Stats: st})
		}
	}
	return out
}

// counterValues merges a port's counters/ and hw_counters/ entries into one map by file name; counters/ wins a
// name found in both. Entries whose name is not a counter's (empty, or holding a path separator) are left out.
func counterValues(ps rdmamap.RdmaPortStats) map[string]uint64 {
	m := make(map[string]uint64, len(ps.Stats)+len(ps.HwStats))
	for _, set := range [][]rdmamap.RdmaStatEntry{ps.HwStats, ps.Stats} {
		for _, e := range set {
			if e.Name != "" && !strings.ContainsRune(e.Name, '/') {
				m[e.Name] = e.Value
			}
		}
	}
	return m
}
