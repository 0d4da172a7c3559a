package rdma

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/discovery/pciaddr"
)

// Scan reads every RDMA device under <root>/class/infiniband. It fails only when the class directory exists
// but cannot be listed, when devices exist but none of them can be read, or when ctx ends; a node without
// RDMA devices gives a Report with NotApplicable set. On the node's own sysfs the device list, the network
// interfaces of each device, its character devices and its ports' counters come from rdmamap (see view).
func Scan(ctx context.Context, root string, opts Options) (Report, error) {
	return scan(ctx, newView(root), opts)
}

func scan(ctx context.Context, v view, opts Options) (Report, error) {
	rep := Report{Root: v.root}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	names, notApplicable, err := v.deviceNames()
	if notApplicable != "" || err != nil {
		rep.NotApplicable = notApplicable
		return rep, err
	}

	var w warnings
	netDevs := v.netDevsByDevice(&w)
	classDir := filepath.Join(v.root, "class", "infiniband")
	var gpus []gpu
	gpusRead := false
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		dev, ok := readDevice(v, classDir, name, netDevs[name], opts, &w)
		if !ok {
			continue
		}
		if dev.PCIPath != nil {
			if !gpusRead {
				gpusRead = true
				gpus, err = findGPUs(v.root, &w)
				if err != nil {
					w.addf("cannot list %s: %s; nearest GPUs unknown",
						filepath.Join(v.root, "bus", "pci", "devices"), errText(err))
				}
			}
			dev.NearestGPU = nearestGPU(dev.PCIPath, gpus)
		}
		rep.Devices = append(rep.Devices, dev)
	}
	rep.Warnings = w.list
	if len(rep.Devices) == 0 {
		return rep, fmt.Errorf("none of the %d entries of %s could be read: %s", len(names), classDir,
			strings.Join(w.list, "; "))
	}
	sort.Slice(rep.Devices, func(i, j int) bool { return naturalLess(rep.Devices[i].Name, rep.Devices[j].Name) })
	return rep, nil
}

// readDevice reads <classDir>/<name>; netDevs are the network interfaces on its bus device. ok is false when
// the device directory itself cannot be read; any other problem is a warning and the device is still
// returned.
func readDevice(v view, classDir, name string, netDevs []netDev, opts Options, w *warnings) (Device, bool) {
	dir := filepath.Join(classDir, name)
	fi, err := os.Stat(dir)
	if err != nil {
		w.addf("cannot read RDMA device %s: %s; device skipped", dir, errText(err))
		return Device{}, false
	}
	if !fi.IsDir() {
		w.addf("cannot read RDMA device %s: not a directory; device skipped", dir)
		return Device{}, false
	}

	dev := Device{Name: name, NUMANode: -1}
	dev.NodeGUID = readGUID(filepath.Join(dir, "node_guid"), w)
	dev.SysImageGUID = readGUID(filepath.Join(dir, "sys_image_guid"), w)
	readBusDevice(v.root, filepath.Join(dir, "device"), &dev, w)
	if opts.CharDevices {
		dev.CharDevices = v.charDevices(name)
	}

	portsDir := filepath.Join(dir, "ports")
	ents, err := os.ReadDir(portsDir)
	if err != nil {
		w.readErr(portsDir, err)
		return dev, true
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 0 {
			w.addf("%s: %q is not a port number; skipped", portsDir, e.Name())
			continue
		}
		p := readPort(filepath.Join(portsDir, e.Name()), n, netDevs, w)
		p.Class = Classify(opts.ClassRules, opts.DefaultClass, name, p.NetDev, dev.PCIAddress)
		dev.Ports = append(dev.Ports, p)
	}
	sort.Slice(dev.Ports, func(i, j int) bool { return dev.Ports[i].Number < dev.Ports[j].Number })
	if !dev.Virtual() {
		numbers := make([]int, len(dev.Ports))
		for i, p := range dev.Ports {
			numbers[i] = p.Number
		}
		counters := v.portCounters(name, numbers)
		for i := range dev.Ports {
			dev.Ports[i].Counters = counters[dev.Ports[i].Number]
		}
	}
	return dev, true
}

// readBusDevice resolves the device's "device" link to its place in the PCI tree: its PCI function, that
// function's NUMA node, the auxiliary device between the two (an mlx5 sub-function) and, for an SR-IOV virtual
// function, its physical function.
func readBusDevice(root, link string, dev *Device, w *warnings) {
	path, err := devicePath(root, link)
	if err != nil {
		w.addf("cannot resolve %s: %s; PCI address and nearest GPU unknown", link, errText(err))
		return
	}
	cut, addr, ok := pciTail(path)
	if !ok {
		w.addf("%s: %s is not a PCI device; PCI address and nearest GPU unknown", link, strings.Join(path, "/"))
		return
	}
	dev.PCIPath, dev.PCIAddress = cut, addr
	if len(path) > len(cut) {
		// On an auxiliary device below the function (/sys/devices/…/0000:06:00.0/mlx5_core.sf.4), which has no
		// numa_node of its own: the function's is read.
		dev.Auxiliary = path[len(cut)]
		dev.NUMANode = readNUMA(filepath.Join(append(append([]string{root, "devices"}, cut...), "numa_node")...), w)
		return
	}
	dev.NUMANode = readNUMA(filepath.Join(link, "numa_node"), w)
	if target, err := os.Readlink(filepath.Join(link, "physfn")); err == nil {
		if pf, err := pciaddr.Normalize(filepath.Base(target)); err == nil {
			dev.PhysFn = pf
		} else {
			w.addf("%s: %s is not a PCI function", filepath.Join(link, "physfn"), target)
		}
	}
}

// readGUID reads a GUID file; unknown (zero) with a warning when the file is missing or malformed.
func readGUID(path string, w *warnings) uint64 {
	s, ok := w.readAttrWarn(path)
	if !ok {
		return 0
	}
	v, err := ParseGUID(s)
	if err != nil {
		w.badValue(path, s, "a GUID such as 946d:ae03:00f8:1a20")
		return 0
	}
	return v
}

// readNUMA reads a numa_node file; -1 (unknown) when the file says so, is missing, or is malformed.
func readNUMA(path string, w *warnings) int {
	s, ok := w.readAttrWarn(path)
	if !ok {
		return -1
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < -1 {
		w.badValue(path, s, "a NUMA node number or -1")
		return -1
	}
	return v
}

// naturalLess orders names with their trailing numbers compared as numbers: mlx5_2 before mlx5_10.
func naturalLess(a, b string) bool {
	pa, na, oka := splitNumber(a)
	pb, nb, okb := splitNumber(b)
	if oka && okb && pa == pb && na != nb {
		return na < nb
	}
	return a < b
}

func splitNumber(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	return s[:i], n, err == nil
}
