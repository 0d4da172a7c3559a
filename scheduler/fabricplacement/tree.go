package fabricplacement

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// labelTree is the tree a PodGroup cycle places on: the one fabricmap's HyperNodes state (treeFromHyperNodes)
// or the one the nodes' fabricmap topology labels state (treeFromLabels), with the label key of each tier.
type labelTree struct {
	tree *topology.Tree
	// keyTier maps each layer's label key to the tier of its domains.
	keyTier map[string]int
	// keys are the label keys the nodes were read with (a named style, detected, or fabricmap's default).
	keys hypernodegen.LabelKeys
	// source is where the tree was read from: sourceHyperNodes or sourceLabels.
	source string
	// tierNums are the tree's tiers, lowest first.
	tierNums []int
	// allLabels says whether any node label may change the tree (HyperNodes that select nodes by regex or
	// label); with HyperNodes otherwise, no node label does.
	allLabels bool
}

// The sources of the tree, as the plugin logs and reports them.
const (
	sourceHyperNodes = "HyperNodes"
	sourceLabels     = "node labels"
)

// labelKeysFor are the keys given (the aggregator's, leaseKeys), else those of the named style the nodes carry,
// else fabricmap's default.
func labelKeysFor(nodeLabels map[string]map[string]string, given *hypernodegen.LabelKeys) hypernodegen.LabelKeys {
	if given != nil {
		return *given
	}
	if keys, ok := hypernodegen.DetectStyle(nodeLabels); ok {
		return keys
	}
	return hypernodegen.DefaultLabelKeys()
}

// treeFromHyperNodes reads the tree from the HyperNodes fabricmap owns (sorted by name) with treeread's strict
// reader, the one the placer and `fabricmap place` use: members by exact name, regular expression or label,
// resolved against nodeLabels (node → labels, the scheduler's nodes). A tree in transition (a member HyperNode
// not written yet, a node or HyperNode claimed by two, a bad annotation) is an error naming the field, so no
// gang is placed on it. Nodes the HyperNodes name that the scheduler does not know (not registered yet, or gone)
// are left out. The label key of each tier is the one fabricmap writes for it (hypernodegen.Tiers with the keys
// given, detected or fabricmap's default), for PodGroups that name a topology key.
func treeFromHyperNodes(hns []*topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string, given *hypernodegen.LabelKeys) (*labelTree, error) {
	items := make([]topologyv1alpha1.HyperNode, len(hns))
	for i, hn := range hns {
		items[i] = *hn
	}
	t, err := treeread.TreeFromHyperNodes(items, nodeLabels)
	if err != nil {
		return nil, fmt.Errorf("reading the tree from fabricmap's %d HyperNodes: %w", len(hns), err)
	}
	tiers := map[int]bool{}
	for _, d := range t.Domains {
		d.Nodes = slices.DeleteFunc(d.Nodes, func(n string) bool { _, ok := nodeLabels[n]; return !ok })
		tiers[d.Tier] = true
	}
	keys := labelKeysFor(nodeLabels, given)
	keyTier := map[string]int{}
	if ts, err := hypernodegen.Tiers(t, keys); err == nil { // else no tier has a key: topology keys are refused
		for _, tr := range ts {
			if tr.LabelKey != "" {
				keyTier[tr.LabelKey] = tr.Tier
			}
		}
	}
	return &labelTree{tree: t, keyTier: keyTier, keys: keys, source: sourceHyperNodes, tierNums: slices.Sorted(maps.Keys(tiers)),
		allLabels: treeread.NeedsNodeLabels(items)}, nil
}

// treeFromLabels reads the tree from nodeLabels (node → labels) with keys, the aggregator's (leaseKeys), or
// when not given the keys of the named style the nodes carry (or fabricmap's default), as treeread.ReadLabelTree
// reads fabricmap's labels for every reader: the switch-tier keys that some node carries are the layers (leaf at
// the bottom, tiers named leaf, spine, core, …), with the NVLink domain key as a layer below them when some node
// carries it. Nodes lacking a switch-tier key are left out of the tree. It is an error when no node carries a
// key, or when the labels do not form a tree (a value under two parents).
func treeFromLabels(nodeLabels map[string]map[string]string, given *hypernodegen.LabelKeys) (*labelTree, error) {
	keys := labelKeysFor(nodeLabels, given)
	lt, err := treeread.ReadLabelTree(nodeLabels, keys, treeread.LabelTreeOptions{Accelerator: true})
	switch {
	case errors.Is(err, treeread.ErrNoTopologyLabels):
		return nil, fmt.Errorf("%w (%s style: %v)", err, styleName(keys), keys.Tiers)
	case err != nil:
		return nil, fmt.Errorf("reading the tree from the nodes' labels (%s style): %w", styleName(keys), err)
	}
	return &labelTree{tree: lt.Tree, keyTier: lt.KeyTier, keys: keys, source: sourceLabels, tierNums: lt.Tiers()}, nil
}

// styleName is the label style of keys as messages name it.
func styleName(keys hypernodegen.LabelKeys) string {
	if keys.Style == "" {
		return "custom"
	}
	return keys.Style
}

// tiers are the tree's tiers, lowest first.
func (lt *labelTree) tiers() []int { return lt.tierNums }

// labelsChanged says whether a node's labels changing from old to n may change the tree: for a tree read from
// labels, one of fabricmap's keys of the style read (a key that no node carried yet may become a layer when one
// does); for one read from HyperNodes, any label when they select nodes by regex or label, else none.
func (lt *labelTree) labelsChanged(old, n map[string]string) bool {
	switch {
	case lt.allLabels:
		return !maps.Equal(old, n)
	case lt.source == sourceHyperNodes:
		return false
	}
	for _, k := range lt.keys.All() {
		if old[k] != n[k] {
			return true
		}
	}
	return false
}
