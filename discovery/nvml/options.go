package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// LibraryPathEnv names the environment variable the registered probe reads for the path of the NVML library
// (for example /run/nvidia/driver/usr/lib64/libnvidia-ml.so.1 when the driver lives in a container). Empty
// or unset means the dynamic loader's usual search for libnvidia-ml.so.1.
const LibraryPathEnv = "FABRICMAP_NVML_LIBRARY"

// Options configure a Probe.
type Options struct {
	// Library is the NVML implementation to query. Nil means go-nvml's own binding, which loads the library
	// named by LibraryPath when the probe runs.
	Library gonvml.Interface
	// LibraryPath is the path or file name of the NVML shared library; empty means libnvidia-ml.so.1 found by
	// the dynamic loader. It is ignored when Library is set.
	LibraryPath string
	// SysfsRoot is where sysfs is mounted; empty means /sys. The probe reads a GPU's NUMA node from
	// <SysfsRoot>/bus/pci/devices/<bus id>/numa_node when NVML cannot tell it.
	SysfsRoot string
}
