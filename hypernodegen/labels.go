package hypernodegen

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// The default node-label keys: those of LabelStyleTopographV1.
const (
	// DefaultAcceleratorKey labels a node with its NVLink domain.
	DefaultAcceleratorKey = TopographAcceleratorDomainKey
	// DefaultAcceleratorSubDomainKey labels a node with its NVLink sub-domain (a rack of an NVLink domain
	// that spans racks).
	DefaultAcceleratorSubDomainKey = TopographAcceleratorSubDomainKey
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
	// AcceleratorSubDomain is the key for the node's NVLink sub-domain, written for the nodes of accelerator
	// sub-domains (topology.TierNameAcceleratorSubDomain); empty writes none.
	AcceleratorSubDomain string
	// Tiers[i] is the key for the node's domain at switch tier i+1, whatever the depth of the rest of the
	// tree: tier i+1 of the tree, or tier i+2 when the tree has accelerator domains (they take tier 1). So a
	// leaf is always Tiers[0], and a node whose leaf hangs right under a root at switch tier 3 gets Tiers[0]
	// and Tiers[2] but no Tiers[1]. Tiers beyond the list are not labelled.
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

// NodeLabels returns, for every node placed in t, the labels that state its place: each tier key set to the
// name of the node's domain at that tier (domains are named to be valid label values), and the accelerator
// key set to the node's NVLink domain (hashed when it is no valid label value), and, for a node of an
// accelerator sub-domain, the sub-domain key set to its NVLink sub-domain (hashed likewise). A domain's key
// is that of its switch tier (LabelKeys.Tiers), not of its place in the node's path: a tier the node's branch
// skips gets no label, and the tiers above it keep their keys.
//
// When t has accelerator domains (TierName "accelerator", one tier below every switch tier, as Build makes
// them with BuildOptions.AcceleratorDomains), keys.Tiers[0] labels the tier just above them, as
// ClusterNetworkTopology and KueueTopology count, so a node's labels are the same with and without them. The
// accelerator value is the NVLink domain its accelerator domain stands for; for a node in none, or an
// accelerator domain that does not record it (a tree read back from HyperNodes), it is nvlink[node], and
// failing that the accelerator domain's name. A tree whose accelerator domains do not share one tier below
// every other domain gives no labels at all (ClusterNetworkTopology refuses it too): its tiers cannot be
// told apart, and labelling nothing leaves the nodes' current labels alone.
func NodeLabels(t *topology.Tree, nvlink map[string]string, keys LabelKeys) map[string]map[string]string {
	out := map[string]map[string]string{}
	accelTier, err := acceleratorTier(t)
	if err != nil {
		return out
	}
	for _, d := range t.Domains {
		for _, n := range d.Nodes {
			out[n] = nodeLabels(t.PathFrom(d.Name), nvlink[n], keys, accelTier)
		}
	}
	return out
}

// nodeLabels returns the labels of a node given its path up the tree and its NVLink domain from the evidence;
// accelTier is the tier of the tree's accelerator domains, 0 when it has none.
func nodeLabels(path []*topology.Domain, nvlink string, keys LabelKeys, accelTier int) map[string]string {
	labels := map[string]string{}
	for _, dom := range path {
		if dom.TierName == topology.TierNameAcceleratorSubDomain {
			if keys.AcceleratorSubDomain != "" {
				labels[keys.AcceleratorSubDomain] = LabelValue(cmp.Or(dom.NVLinkSubDomain, dom.Name))
			}
			nvlink = cmp.Or(dom.NVLinkDomain, nvlink)
			continue
		}
		if dom.TierName == topology.TierNameAccelerator {
			nvlink = cmp.Or(dom.NVLinkDomain, nvlink, dom.Name)
			continue
		}
		if i := dom.Tier - accelTier - 1; i >= 0 && i < len(keys.Tiers) && keys.Tiers[i] != "" {
			labels[keys.Tiers[i]] = dom.Name
		}
	}
	if nvlink != "" && keys.Accelerator != "" {
		labels[keys.Accelerator] = LabelValue(nvlink)
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
