package labels

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Presets are the label keys managed Kubernetes services write on their nodes themselves, top of the network
// first, by preset name (--label-source-preset):
//
//   - eks: Amazon EKS's network-node layers of EC2 instance topology, layer 1 the top. Instance types with a
//     fourth layer also carry topology.k8s.aws/network-node-layer-4; the preset stops at the third, which every
//     supported type has (a node must have every key to be placed), so on those types a domain is the
//     third-layer node.
//   - gke: Google Kubernetes Engine's physical host topology of Compute Engine: the block, then the sub-block
//     (the host label is the machine itself, one node, and no domain).
var Presets = map[string][]string{
	"eks": {"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2", "topology.k8s.aws/network-node-layer-3"},
	"gke": {"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock"},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string { return slices.Sorted(maps.Keys(Presets)) }

// Resolve sets Keys from Preset when one is named: a preset and keys together, or an unknown preset, are
// refused. It is idempotent.
func (o *SourceOptions) Resolve() error {
	if o.Preset == "" {
		return nil
	}
	keys, ok := Presets[o.Preset]
	switch {
	case !ok:
		return fmt.Errorf("label source preset %q: want one of %s", o.Preset, strings.Join(PresetNames(), ", "))
	case len(o.Keys) > 0 && !slices.Equal(o.Keys, keys):
		return fmt.Errorf("label source preset %q and keys %s given together: give one", o.Preset, strings.Join(o.Keys, ","))
	}
	o.Keys = slices.Clone(keys)
	return nil
}
