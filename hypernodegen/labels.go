package hypernodegen

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// Default node-label keys: the ones the Koordinator network-topology seed and NVIDIA topograph use.
const (
	// DefaultAcceleratorKey labels a node with its NVLink domain.
	DefaultAcceleratorKey = "network.topology.nvidia.com/accelerator"
)

// DefaultTierKeys label a node with its domain at tier 1 (leaf: "block"), 2 (spine) and 3 (datacenter).
var DefaultTierKeys = []string{
	"network.topology.nvidia.com/block",
	"network.topology.nvidia.com/spine",
	"network.topology.nvidia.com/datacenter",
}

// LabelKeys says which node labels fabricmap writes.
type LabelKeys struct {
	// Accelerator is the key for the node's NVLink domain; empty writes none.
	Accelerator string
	// Tiers[i] is the key for the node's domain at tier i+1; tiers beyond the list are not labelled.
	Tiers []string
}

// DefaultLabelKeys returns the default key set.
func DefaultLabelKeys() LabelKeys {
	return LabelKeys{Accelerator: DefaultAcceleratorKey, Tiers: append([]string(nil), DefaultTierKeys...)}
}

// All returns every key the set holds, the keys fabricmap owns on nodes.
func (k LabelKeys) All() []string {
	var out []string
	if k.Accelerator != "" {
		out = append(out, k.Accelerator)
	}
	for _, t := range k.Tiers {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Validate checks that every key is a valid label key.
func (k LabelKeys) Validate() error {
	for _, key := range k.All() {
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return fmt.Errorf("label key %s is invalid: %s", key, msgs[0])
		}
	}
	return nil
}

// NodeLabels returns, for every node placed in t, the labels that state its place: each tier key set to the
// name of the node's domain at that tier (domains are named to be valid label values), and the accelerator
// key set to the node's NVLink domain from nvlink (hashed when it is no valid label value). A tier the
// node's branch skips gets no label.
func NodeLabels(t *topology.Tree, nvlink map[string]string, keys LabelKeys) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, d := range t.Domains {
		for _, n := range d.Nodes {
			labels := map[string]string{}
			for _, dom := range t.PathFrom(d.Name) {
				if i := dom.Tier - 1; i >= 0 && i < len(keys.Tiers) && keys.Tiers[i] != "" {
					labels[keys.Tiers[i]] = dom.Name
				}
			}
			if v := nvlink[n]; v != "" && keys.Accelerator != "" {
				labels[keys.Accelerator] = LabelValue(v)
			}
			out[n] = labels
		}
	}
	return out
}

// LabelValue returns v when it is a valid label value, else a stable hashed form of it (see topology.UniqueName).
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return topology.UniqueName(v)
}
