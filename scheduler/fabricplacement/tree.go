package fabricplacement

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// labelTree is the tree the nodes' fabricmap topology labels state, with the label key of each layer.
type labelTree struct {
	tree *topology.Tree
	// keyTier maps each layer's label key to the tier of its domains.
	keyTier map[string]int
	// keys are the label keys the nodes were read with (a named style, detected, or fabricmap's default).
	keys hypernodegen.LabelKeys
}

// treeFromLabels reads the tree from nodeLabels (node → labels) with keys, the aggregator's (leaseKeys), or
// when not given the keys of the named style the nodes carry (or fabricmap's default), as treeread.ReadLabelTree
// reads fabricmap's labels for every reader: the switch-tier keys that some node carries are the layers (leaf at
// the bottom, tiers named leaf, spine, core, …), with the NVLink domain key as a layer below them when some node
// carries it. Nodes lacking a switch-tier key are left out of the tree. It is an error when no node carries a
// key, or when the labels do not form a tree (a value under two parents).
func treeFromLabels(nodeLabels map[string]map[string]string, given *hypernodegen.LabelKeys) (*labelTree, error) {
	keys, ok := hypernodegen.LabelKeys{}, given != nil
	if ok {
		keys = *given
	} else if keys, ok = hypernodegen.DetectStyle(nodeLabels); !ok {
		keys = hypernodegen.DefaultLabelKeys()
	}
	lt, err := treeread.ReadLabelTree(nodeLabels, keys, treeread.LabelTreeOptions{Accelerator: true})
	switch {
	case errors.Is(err, treeread.ErrNoTopologyLabels):
		return nil, fmt.Errorf("%w (%s style: %v)", err, styleName(keys), keys.Tiers)
	case err != nil:
		return nil, fmt.Errorf("reading the tree from the nodes' labels (%s style): %w", styleName(keys), err)
	}
	return &labelTree{tree: lt.Tree, keyTier: lt.KeyTier, keys: keys}, nil
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
