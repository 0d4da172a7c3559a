package nvml

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// numaNode returns the GPU's NUMA node, or -1 when unknown, with a warning when it could not be read.
// NVML's own answer wins when the library has the call and the platform supports it; otherwise the kernel's
// numa_node file for the GPU's PCI function is read.
func (p *Probe) numaNode(dev gonvml.Device, busID string, syms *symbols) (int, string) {
	if syms.has(symNumaNodeID) {
		// NOT_SUPPORTED is the usual answer on platforms where NVML does not track it; any failure here
		// falls through to sysfs, which then decides whether there is something to warn about.
		if n, ret := dev.GetNumaNodeId(); ret == gonvml.SUCCESS && n >= 0 {
			return n, ""
		}
	}
	if busID == "" {
		return -1, "" // the missing bus ID has been reported already
	}
	n, err := readSysfsNUMANode(p.sysfsRoot, busID)
	if err != nil {
		return -1, err.Error()
	}
	return n, ""
}

// readSysfsNUMANode reads <root>/bus/pci/devices/<busID>/numa_node; the kernel's -1 ("no NUMA affinity")
// comes back as -1 without an error.
func readSysfsNUMANode(root, busID string) (int, error) {
	path := filepath.Join(root, "bus", "pci", "devices", busID, "numa_node")
	data, err := os.ReadFile(path)
	if err != nil {
		return -1, fmt.Errorf("read NUMA node: %w", err)
	}
	text := strings.TrimSpace(string(data))
	n, err := strconv.Atoi(text)
	if err != nil {
		return -1, fmt.Errorf("read NUMA node: %s holds %q, not a number", path, text)
	}
	if n < 0 {
		return -1, nil
	}
	return n, nil
}
