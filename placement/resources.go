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

// Times returns r scaled by n.
func (r Resources) Times(n int64) Resources {
	out := make(Resources, len(r))
	for k, v := range r {
		out[k] = v * n
	}
	return out
}
