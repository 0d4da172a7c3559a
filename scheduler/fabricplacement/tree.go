package fabricplacement

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// soloNVLinkPrefix names the NVLink domain of a node that reports none, when other nodes carry the NVLink key:
// such a node is an NVLink domain of its own, as the aggregator's tree has it (topology.Build with accelerator
// domains). The prefix holds a character no label value may hold, so it never meets a real domain's name.
const soloNVLinkPrefix = "solo/"

// labelTree is the tree the nodes' fabricmap topology labels state, with the label key of each layer.
type labelTree struct {
	tree *topology.Tree
	// keyTier maps each layer's label key to the tier of its domains.
	keyTier map[string]int
	// keys are the label keys the nodes were read with (a named style, detected, or fabricmap's default).
	keys hypernodegen.LabelKeys
}

// treeFromLabels reads the tree from nodeLabels (node → labels) with keys, the aggregator's (leaseKeys), or
// when not given the keys of the named style the nodes carry (or fabricmap's default): the switch-tier keys that some node
// carries are the layers (leaf at the bottom, tiers named leaf, spine, core, …), with the NVLink domain key as a
// layer below them when some node carries it. Nodes lacking a switch-tier key are left out of the tree. It is
// an error when no node carries a key, or when the labels do not form a tree (a value under two parents).
func treeFromLabels(nodeLabels map[string]map[string]string, given *hypernodegen.LabelKeys) (*labelTree, error) {
	keys, ok := hypernodegen.LabelKeys{}, given != nil
	if ok {
		keys = *given
	} else if keys, ok = hypernodegen.DetectStyle(nodeLabels); !ok {
		keys = hypernodegen.DefaultLabelKeys()
	}
	carried := func(key string) bool {
		return key != "" && slices.ContainsFunc(slices.Collect(maps.Values(nodeLabels)), func(l map[string]string) bool { return l[key] != "" })
	}
	var layers []treeread.Layer // top first
	for i := len(keys.Tiers) - 1; i >= 0; i-- {
		if carried(keys.Tiers[i]) {
			layers = append(layers, treeread.Layer{Name: topology.TierName(i + 1), LabelKey: keys.Tiers[i]})
		}
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("no node carries fabricmap's topology labels (%s style: %v)", styleName(keys), keys.Tiers)
	}
	labels := nodeLabels
	if carried(keys.Accelerator) {
		layers = append(layers, treeread.Layer{Name: topology.TierNameAccelerator, LabelKey: keys.Accelerator})
		labels = make(map[string]map[string]string, len(nodeLabels))
		for n, l := range nodeLabels {
			if l[keys.Accelerator] == "" {
				l = maps.Clone(l)
				l[keys.Accelerator] = soloNVLinkPrefix + n
			}
			labels[n] = l
		}
	}
	tree, _, err := treeread.TreeFromLabels(layers, labels)
	if err != nil && len(layers) > 1 && layers[len(layers)-1].LabelKey == keys.Accelerator {
		// An NVLink domain that spans leaves names no single domain under one leaf: place on the switch tiers.
		layers, labels = layers[:len(layers)-1], nodeLabels
		tree, _, err = treeread.TreeFromLabels(layers, labels)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tree from the nodes' labels (%s style): %w", styleName(keys), err)
	}
	keyTier := make(map[string]int, len(layers))
	for i, l := range layers {
		keyTier[l.LabelKey] = len(layers) - i
	}
	return &labelTree{tree: tree, keyTier: keyTier, keys: keys}, nil
}

// styleName is the label style of keys as messages name it.
func styleName(keys hypernodegen.LabelKeys) string {
	if keys.Style == "" {
		return "custom"
	}
	return keys.Style
}

// tiers are the tree's keyed tiers, lowest first.
func (lt *labelTree) tiers() []int { return slices.Sorted(maps.Values(lt.keyTier)) }

// labelKeys are every key the tree could be read from: fabricmap's keys of the style read (a key that no node
// carried yet may become a layer when one does).
func (lt *labelTree) labelKeys() []string { return lt.keys.All() }
