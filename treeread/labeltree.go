package treeread

import (
	"errors"
	"maps"
	"slices"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// ErrNoTopologyLabels is ReadLabelTree's answer when no node carries any of the keys' tier labels.
var ErrNoTopologyLabels = errors.New("no node carries fabricmap's topology labels")

// SoloNVLinkPrefix names the NVLink domain of a node that reports none, when other nodes carry the NVLink key
// (LabelTreeOptions.Accelerator): such a node is an NVLink domain of its own, as the aggregator's tree has it.
// The prefix holds a character no label value may hold, so it never meets a real domain's name.
const SoloNVLinkPrefix = "solo/"

// LabelTreeOptions say how ReadLabelTree reads the nodes' labels.
type LabelTreeOptions struct {
	// Accelerator adds the NVLink domain key (LabelKeys.Accelerator) as a layer below the switch tiers when some
	// node carries it (a node without one is a domain of its own, SoloNVLinkPrefix); when the NVLink domains do
	// not form a tree under the leaves (one spans two leaves) the switch tiers are read alone.
	Accelerator bool
	// NameRoot names the top switch layer the root's tier (topology.TierNameRoot) when it is the root's:
	// the aggregator labels every switch tier up to the root's, so it is when a key above it is left unwritten,
	// or when it names one domain; with a single layer it is the leaves'.
	NameRoot bool
	// Source, when set, is every domain's Source.
	Source string
}

// LabelTree is the tree the nodes' fabricmap topology labels state, and how it was read.
type LabelTree struct {
	// Tree is the tree; nodes lacking a switch-tier key are left out of it.
	Tree *topology.Tree
	// Layers are the layers read, top first (the NVLink layer last when read).
	Layers []Layer
	// KeyTier maps each layer's label key to the tier of its domains.
	KeyTier map[string]int
}

// ReadLabelTree reads the tree that the nodes' labels (node → labels) state by keys, the one reading of
// fabricmap's node labels that `fabricmap` (a cluster without HyperNodes) and fabricmap-scheduler share: each
// switch-tier key some node carries is a layer (leaf at the bottom), named as the aggregator's tree names its
// tiers (topology.TierName of the key's position: leaf, spine, core, …). It is ErrNoTopologyLabels when no node
// carries a tier key, and an error naming the label when the labels do not form a tree (a value under two
// parents).
func ReadLabelTree(nodes map[string]map[string]string, keys hypernodegen.LabelKeys, o LabelTreeOptions) (*LabelTree, error) {
	carried := func(key string) bool {
		if key == "" {
			return false
		}
		for _, l := range nodes {
			if l[key] != "" {
				return true
			}
		}
		return false
	}
	var layers []Layer // top first
	top := -1          // index in keys.Tiers of the top layer
	for i := len(keys.Tiers) - 1; i >= 0; i-- {
		if carried(keys.Tiers[i]) {
			if top < 0 {
				top = i
			}
			layers = append(layers, Layer{Name: topology.TierName(i + 1), LabelKey: keys.Tiers[i]})
		}
	}
	if len(layers) == 0 {
		return nil, ErrNoTopologyLabels
	}
	if o.NameRoot && rootLayer(nodes, keys, top, len(layers)) {
		layers[0].Name = topology.TierNameRoot
	}
	switchLayers, labels := layers, nodes
	if o.Accelerator && carried(keys.Accelerator) {
		layers = append(slices.Clone(layers), Layer{Name: topology.TierNameAccelerator, LabelKey: keys.Accelerator})
		labels = make(map[string]map[string]string, len(nodes))
		for n, l := range nodes {
			if l[keys.Accelerator] == "" {
				l = maps.Clone(l)
				l[keys.Accelerator] = SoloNVLinkPrefix + n
			}
			labels[n] = l
		}
	}
	t, _, err := TreeFromLabels(layers, labels)
	if err != nil && len(layers) > len(switchLayers) {
		// An NVLink domain that spans leaves names no single domain under one leaf: the switch tiers alone.
		layers = switchLayers
		t, _, err = TreeFromLabels(layers, nodes)
	}
	if err != nil {
		return nil, err
	}
	if o.Source != "" {
		for _, d := range t.Domains {
			d.Source = o.Source
		}
	}
	keyTier := make(map[string]int, len(layers))
	for i, l := range layers {
		keyTier[l.LabelKey] = len(layers) - i
	}
	return &LabelTree{Tree: t, Layers: layers, KeyTier: keyTier}, nil
}

// rootLayer tells whether the top layer of a tree read from the nodes' labels (keys.Tiers[top], one of layers
// layers) is the root's tier. The aggregator labels every switch tier up to the root's (hypernodegen.NodeLabels),
// so it is when a key above it is left unwritten, or when it names one domain; when the keys end there and it
// names several, the keys may end below the root, and the tier is named by its number. A single layer is the
// leaves'.
func rootLayer(nodes map[string]map[string]string, keys hypernodegen.LabelKeys, top, layers int) bool {
	if layers < 2 {
		return false
	}
	if slices.ContainsFunc(keys.Tiers[top+1:], func(k string) bool { return k != "" }) {
		return true
	}
	values := map[string]bool{}
	for _, l := range nodes {
		if v := l[keys.Tiers[top]]; v != "" {
			values[v] = true
		}
	}
	return len(values) == 1
}

// Tiers are the tree's keyed tiers, lowest first.
func (lt *LabelTree) Tiers() []int { return slices.Sorted(maps.Values(lt.KeyTier)) }
