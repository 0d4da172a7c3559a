package placement

import (
	"maps"
	"slices"
)

// Resources maps a resource name (nvidia.com/gpu, cpu, memory, any extended resource) to a quantity in one
// unit the caller keeps consistent between nodes and pods (e.g. millicores for cpu, bytes for memory).
type Resources map[string]int64

// Names returns the resource names, sorted.
func (r Resources) Names() []string { return slices.Sorted(maps.Keys(r)) }
