package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
)

// WriteGPUs writes the GPU fixture the stand-in NVML library (internal/fakenvml) answers from for node into dir
// and returns its path: one line a GPU, each registered with the node's NVLink domain when it has one.
func WriteGPUs(dir string, node SimNode, index int) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %d x %s\n", node.Name, node.GPUs, node.GPUModel)
	cluster, clique := "-", 0
	if node.NVLink != nil {
		cluster, clique = node.NVLink.ClusterUUID, node.NVLink.Clique
	}
	for g := range node.GPUs {
		// uuid|model name|PCI bus id|NUMA node|fabric cluster UUID|clique id|NVLinks (csrc/fakenvml.c)
		fmt.Fprintf(&b, "GPU-%08x-0000-4000-8000-%012x|%s|00000000:%02X:00.0|%d|%s|%d|18\n",
			index, g, node.GPUModel, 0x18+0x10*g, g*2/node.GPUs, cluster, clique)
	}
	path := filepath.Join(dir, node.Name+".gpus")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("writing the GPU fixture of %s: %w", node.Name, err)
	}
	return path, nil
}

// buildNVML compiles the stand-in libnvidia-ml.so.1 into dir (gcc and the go-nvml module are needed).
func buildNVML(dir string) (string, error) {
	lib, err := fakenvml.Build(filepath.Join(dir, "nvml"))
	if err != nil {
		return "", fmt.Errorf("the stand-in NVML library for the simulated GPUs: %w", err)
	}
	return lib, nil
}
