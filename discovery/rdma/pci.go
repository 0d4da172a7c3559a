package rdma

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/discovery/pciaddr"
)

// PCI identifiers the GPU search needs.
const (
	pciVendorNVIDIA = 0x10de
	pciClassVGA     = 0x0300 // class code 0x0300xx: VGA-compatible display controller
	pciClass3D      = 0x0302 // class code 0x0302xx: 3D controller (data-centre GPUs)
)

// devicePath resolves a sysfs link (a class entry's device link, a bus/pci/devices entry) to its components
// under <root>/devices: ["pci0000:15", "0000:15:01.0", ..., "0000:18:00.0"].
func devicePath(root, link string) ([]string, error) {
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return nil, err
	}
	base, err := filepath.EvalSymlinks(filepath.Join(root, "devices"))
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(base, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("resolves to %s, outside %s", real, base)
	}
	return strings.Split(filepath.ToSlash(rel), "/"), nil
}

// pciTail cuts a device path after its last PCI function and returns that function's address; ok is false
// when no component is a PCI function.
func pciTail(path []string) (cut []string, addr string, ok bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if pciaddr.IsFunction(path[i]) {
			a, err := pciaddr.Normalize(path[i])
			if err != nil {
				return nil, "", false
			}
			return path[:i+1], a, true
		}
	}
	return nil, "", false
}

// gpu is one NVIDIA GPU found on the PCI bus.
type gpu struct {
	addr string
	path []string
}

// findGPUs lists the NVIDIA GPUs under <root>/bus/pci/devices with their PCI tree paths.
func findGPUs(root string, w *warnings) ([]gpu, error) {
	dir := filepath.Join(root, "bus", "pci", "devices")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gpus []gpu
	for _, e := range entries {
		link := filepath.Join(dir, e.Name())
		vendorFile := filepath.Join(link, "vendor")
		vs, ok := w.readAttrWarn(vendorFile)
		if !ok {
			continue
		}
		vendor, err := strconv.ParseUint(vs, 0, 16)
		if err != nil {
			w.badValue(vendorFile, vs, "a hex vendor ID such as 0x10de")
			continue
		}
		if vendor != pciVendorNVIDIA {
			continue
		}
		classFile := filepath.Join(link, "class")
		cs, ok := w.readAttrWarn(classFile)
		if !ok {
			continue
		}
		class, err := strconv.ParseUint(cs, 0, 32)
		if err != nil {
			w.badValue(classFile, cs, "a hex class code such as 0x030200")
			continue
		}
		if c := class >> 8; c != pciClass3D && c != pciClassVGA {
			continue // an NVSwitch, an audio function, a bridge
		}
		path, err := devicePath(root, link)
		if err != nil {
			w.addf("cannot resolve %s: %s", link, errText(err))
			continue
		}
		path, addr, ok := pciTail(path)
		if !ok {
			w.addf("cannot resolve %s: no PCI function in its path", link)
			continue
		}
		gpus = append(gpus, gpu{addr: addr, path: path})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].addr < gpus[j].addr })
	return gpus, nil
}

// nearestGPU picks the GPU whose deepest common PCI ancestor with path is deepest. Ancestors above the host
// bridge (nothing shared, or only a platform node) do not count.
func nearestGPU(path []string, gpus []gpu) *GPUAffinity {
	best := 0
	var cands []string
	for _, g := range gpus {
		n := commonPrefix(path, g.path)
		// The common ancestor must be an ancestor of both, not one of the two devices themselves.
		if n >= len(path) || n >= len(g.path) {
			n = min(len(path), len(g.path)) - 1
		}
		if n == 0 || n < best {
			continue
		}
		if n > best {
			best, cands = n, nil
		}
		cands = append(cands, g.addr)
	}
	if best == 0 {
		return nil
	}
	anc := path[best-1]
	var level AffinityLevel
	switch {
	case !pciaddr.IsFunction(anc):
		if !isHostBridge(anc) {
			return nil
		}
		level = AffinityHostBridge
	case best >= 2 && isHostBridge(path[best-2]):
		level = AffinityRootPort
	default:
		level = AffinitySwitch
	}
	return &GPUAffinity{PCIAddress: cands[0], Level: level, Ancestor: anc, Candidates: cands}
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// isHostBridge tells whether a sysfs path component is a PCI host bridge ("pci0000:15", a VMD "pci10000:e0").
func isHostBridge(s string) bool {
	return strings.HasPrefix(s, "pci") && !pciaddr.IsFunction(s)
}
