package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Symbols of NVML calls newer than the oldest drivers fabricmap meets. go-nvml resolves C symbols lazily, so
// calling one the loaded library lacks crashes the process; the probe asks the library first.
const (
	symNumaNodeID          = "nvmlDeviceGetNumaNodeId"
	symGpuFabricInfo       = "nvmlDeviceGetGpuFabricInfo"
	symGpuFabricInfoV      = "nvmlDeviceGetGpuFabricInfoV"
	symNvLinkRemoteDevType = "nvmlDeviceGetNvLinkRemoteDeviceType"
)

// symbols answers, and remembers for one run, whether the loaded library exports a symbol.
type symbols struct {
	ext   gonvml.ExtendedInterface
	known map[string]bool
}

// newSymbols wraps an initialised library.
func newSymbols(lib gonvml.Interface) *symbols {
	return &symbols{ext: lib.Extensions(), known: map[string]bool{}}
}

// has reports whether the library exports name.
func (s *symbols) has(name string) bool {
	if ok, seen := s.known[name]; seen {
		return ok
	}
	ok := s.ext != nil && s.ext.LookupSymbol(name) == nil
	s.known[name] = ok
	return ok
}
