package rdma

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Scan reads every RDMA device under <root>/class/infiniband. It fails only when the class directory exists
// but cannot be listed, when devices exist but none of them can be read, or when ctx ends; a node without
// RDMA devices gives a Report with NotApplicable set.
func Scan(ctx context.Context, root string, opts Options) (Report, error) {
	rep := Report{Root: root}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	classDir := filepath.Join(root, "class", "infiniband")
	entries, err := os.ReadDir(classDir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		rep.NotApplicable = "no RDMA devices under " + classDir
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("cannot list %s: %s", classDir, errText(err))
	}

	var w warnings
	var gpus []gpu
	gpusRead := false
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		dev, ok := readDevice(root, classDir, e.Name(), opts, &w)
		if !ok {
			continue
		}
		if dev.PCIPath != nil {
			if !gpusRead {
				gpusRead = true
				gpus, err = findGPUs(root, &w)
				if err != nil {
					w.addf("cannot list %s: %s; nearest GPUs unknown",
						filepath.Join(root, "bus", "pci", "devices"), errText(err))
				}
			}
			dev.NearestGPU = nearestGPU(dev.PCIPath, gpus)
		}
		rep.Devices = append(rep.Devices, dev)
	}
	rep.Warnings = w.list
	if len(rep.Devices) == 0 {
		return rep, fmt.Errorf("none of the %d entries of %s could be read: %s", len(entries), classDir,
			strings.Join(w.list, "; "))
	}
	sort.Slice(rep.Devices, func(i, j int) bool { return naturalLess(rep.Devices[i].Name, rep.Devices[j].Name) })
	return rep, nil
}

// readDevice reads <classDir>/<name>. ok is false when the device directory itself cannot be read; any other
// problem is a warning and the device is still returned.
func readDevice(root, classDir, name string, opts Options, w *warnings) (Device, bool) {
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

	link := filepath.Join(dir, "device")
	if path, err := devicePath(root, link); err != nil {
		w.addf("cannot resolve %s: %s; PCI address and nearest GPU unknown", link, errText(err))
	} else if cut, addr, ok := pciTail(path); ok {
		dev.PCIPath, dev.PCIAddress = cut, addr
		dev.NUMANode = readNUMA(filepath.Join(link, "numa_node"), w)
	} else {
		w.addf("%s: %s is not a PCI device; PCI address and nearest GPU unknown", link, strings.Join(path, "/"))
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
		p := readPort(filepath.Join(portsDir, e.Name()), n, link, w)
		p.Class = Classify(opts.ClassRules, opts.DefaultClass, name, p.NetDev, dev.PCIAddress)
		dev.Ports = append(dev.Ports, p)
	}
	sort.Slice(dev.Ports, func(i, j int) bool { return dev.Ports[i].Number < dev.Ports[j].Number })
	return dev, true
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
