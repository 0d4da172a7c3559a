package hypernodegen

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// The default node-label keys: those of LabelStyleTopographV1.
const (
	// DefaultAcceleratorKey labels a node with its NVLink domain.
	DefaultAcceleratorKey = wellknown.TopographAcceleratorDomainKey
	// DefaultAcceleratorSubDomainKey labels a node with its NVLink sub-domain (a rack of an NVLink domain
	// that spans racks).
	DefaultAcceleratorSubDomainKey = wellknown.TopographAcceleratorSubDomainKey
)

// DefaultTierKeys label a node with its domain at switch tier 1 (the leaf), 2, …: topograph v1's
// fabric.topograph.run/tier-0, tier-1, … (TopographTierKeys).
var DefaultTierKeys = TopographTierKeys()

// LabelKeys says which node labels fabricmap writes.
type LabelKeys struct {
	// Style is the family the keys come from: LabelStyleTopographV1 or LabelStyleNVIDIAV0, whose keys are
	// fixed (StyleKeys; Resolve sets them from the flags), or LabelStyleCustom or empty for keys as given.
	Style string
	// Accelerator is the key for the node's NVLink domain; empty writes none.
	Accelerator string
	// AcceleratorSubDomain is the key for the node's NVLink sub-domain, written for every node whenever the
	// NVLink domain is, when the tree has accelerator domains (see NodeLabels); empty writes none.
	AcceleratorSubDomain string
	// Tiers[i] is the key for the node's domain at switch tier i+1, whatever the depth of the rest of the
	// tree: tier i+1 of the tree, or tier i+2 (i+3) when the tree has accelerator domains (and sub-domains)
	// below the leaves. So a leaf is always Tiers[0]; a node whose leaf hangs right under a root at switch
	// tier 3 gets Tiers[1] = its leaf's name too (see NodeLabels). Tiers beyond the list are not labelled.
	Tiers []string
}

// DefaultLabelKeys returns the default key set, LabelStyleTopographV1's.
func DefaultLabelKeys() LabelKeys { return topographV1Keys() }

// All returns every key the set holds, the keys fabricmap owns on nodes.
func (k LabelKeys) All() []string {
	var out []string
	for _, a := range []string{k.Accelerator, k.AcceleratorSubDomain} {
		if a != "" {
			out = append(out, a)
		}
	}
	for _, t := range k.Tiers {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Validate checks the style (known, and a named style's keys its own: see Resolve) and that every key is a
// valid label key.
func (k LabelKeys) Validate() error {
	if err := k.validateStyle(); err != nil {
		return err
	}
	for _, key := range k.All() {
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return fmt.Errorf("label key %s is invalid: %s", key, msgs[0])
		}
	}
	return nil
}

// NodeLabels returns, for every node placed in t, the labels that state its place, one dimension per key:
//
//   - the switch tiers: keys.Tiers[i] set to the name of the node's domain at switch tier i+1 (tier-0 its leaf
//     or rail group, tier-1 the spine above it, …, up to the root), whatever its NVLink domain. Every node gets
//     the same set of tier keys, those up to the root's tier: where the node's branch skips a tier (a leaf
//     directly under the root), that key takes the name of the node's domain just below it, the closest domain
//     that holds the node at that distance, so that every Kueue level names every node. Domains are named to be
//     valid label values.
//   - the NVLink domain, when t has accelerator domains: keys.Accelerator set to the node's NVLink domain
//     (hashed when it is no valid label value), from its accelerator domain, else nvlink[node]; a node without
//     an NVLink domain gets its own name (its GPUs share NVLink within it only), since the Kueue Topology then
//     has an accelerator level and Kueue needs every level on every node.
//   - the NVLink sub-domain, whenever the NVLink domain: keys.AcceleratorSubDomain set to the node's
//     sub-domain (a rack), else the value of its accelerator key (its NVLink domain is one rack).
//
// A tree without accelerator domains (built without BuildOptions.AcceleratorDomains) gives no NVLink labels
// at all, whatever nvlink says: its HyperNodes and Kueue levels have no NVLink level either, and the outputs
// tell one story (NVLinkLeftOut counts the nodes whose NVLink domain is left out so).
//
// When t has accelerator domains (TierName "accelerator", one tier below every switch tier, as Build makes
// them with BuildOptions.AcceleratorDomains), keys.Tiers[0] labels the tier just above them, as
// ClusterNetworkTopology and KueueTopology count, so a node's tier labels are the same with and without them.
// A tree whose accelerator domains do not share one tier below every other domain gives no labels at all
// (ClusterNetworkTopology refuses it too): its tiers cannot be told apart, and labelling nothing leaves the
// nodes' current labels alone.
//
// Nodes whose labels are equal share one map (the nodes of one domain with one NVLink domain: at 50,000 nodes
// some 3,000 maps instead of 50,000): read the maps, and copy one before changing it.
func NodeLabels(t *topology.Tree, nvlink map[string]string, keys LabelKeys) map[string]map[string]string {
	shape, err := shapeOf(t)
	if err != nil {
		return map[string]map[string]string{}
	}
	nodes := 0
	for _, d := range t.Domains {
		nodes += len(d.Nodes)
	}
	out := make(map[string]map[string]string, nodes)
	for _, d := range t.Domains {
		if len(d.Nodes) == 0 {
			continue
		}
		path := t.PathFrom(d.Name)                 // once per domain: its nodes share it
		byNVLink := map[string]map[string]string{} // the domain's nodes of one NVLink domain have equal labels
		for _, n := range d.Nodes {
			id := nvlink[n]
			if id == "" { // labelled by its own name: its labels are its own
				out[n] = nodeLabels(n, path, id, keys, shape)
				continue
			}
			m, ok := byNVLink[id]
			if !ok {
				m = nodeLabels(n, path, id, keys, shape)
				byNVLink[id] = m
			}
			out[n] = m
		}
	}
	return out
}

// treeShape is what NodeLabels needs to know of the whole tree to label one node.
type treeShape struct {
	// accelTier is the tier of the tree's accelerator domains, 0 when it has none.
	accelTier int
	// topIndex is the index in LabelKeys.Tiers of the highest switch tier (the root's); -1 for none.
	topIndex int
}

// shapeOf measures t for NodeLabels.
func shapeOf(t *topology.Tree) (treeShape, error) {
	accelTier, err := acceleratorTier(t)
	if err != nil {
		return treeShape{}, err
	}
	s := treeShape{accelTier: accelTier, topIndex: -1}
	for _, d := range t.Domains {
		if !isAccelerator(d) {
			s.topIndex = max(s.topIndex, d.Tier-accelTier-1)
		}
	}
	return s, nil
}

// nodeLabels returns the labels of node given its path up the tree and its NVLink domain from the evidence.
func nodeLabels(node string, path []*topology.Domain, nvlink string, keys LabelKeys, shape treeShape) map[string]string {
	labels := make(map[string]string, len(keys.Tiers)+2)
	sub := ""
	var buf [8]string
	byIndex := buf[:0] // the name of the switch domain at each index of keys.Tiers ("" for none)
	if shape.topIndex >= len(buf) {
		byIndex = make([]string, 0, shape.topIndex+1)
	}
	byIndex = byIndex[:max(shape.topIndex+1, 0)]
	for _, dom := range path {
		switch dom.TierName {
		case topology.TierNameAcceleratorSubDomain:
			sub = LabelValue(cmp.Or(dom.NVLinkSubDomain, dom.Name))
			nvlink = cmp.Or(dom.NVLinkDomain, nvlink)
		case topology.TierNameAccelerator:
			nvlink = cmp.Or(dom.NVLinkDomain, nvlink, dom.Name)
		default:
			if i := dom.Tier - shape.accelTier - 1; i >= 0 && i < len(byIndex) {
				byIndex[i] = dom.Name
			}
		}
	}
	below := ""
	for i := 0; i <= shape.topIndex; i++ {
		if name := byIndex[i]; name != "" {
			below = name
		}
		if i < len(keys.Tiers) && keys.Tiers[i] != "" && below != "" {
			labels[keys.Tiers[i]] = below
		}
	}
	if shape.accelTier == 0 {
		return labels // no NVLink level in the tree: none in the labels either (see NodeLabels)
	}
	accel := LabelValue(cmp.Or(nvlink, node))
	if keys.Accelerator != "" {
		labels[keys.Accelerator] = accel
	}
	if keys.AcceleratorSubDomain != "" {
		labels[keys.AcceleratorSubDomain] = cmp.Or(sub, accel)
	}
	return labels
}

// LabelValue returns v when it is a valid label value, else a stable hashed form of it (see topology.UniqueName).
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return topology.UniqueName(v)
}
