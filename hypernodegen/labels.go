package hypernodegen

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/topology"
)

// Default node-label keys: the ones the Koordinator network-topology seed and NVIDIA topograph use.
const (
	// DefaultAcceleratorKey labels a node with its NVLink domain.
	DefaultAcceleratorKey = "network.topology.nvidia.com/accelerator"
	// TopographAcceleratorDomainKey is topograph's key for the NVLink domain: an Accelerator key to choose
	// for clusters that read topograph's accelerator labels.
	TopographAcceleratorDomainKey = "accelerator.topograph.run/domain"
	// DefaultAcceleratorSubDomainKey labels a node with its NVLink sub-domain (a rack of an NVLink domain
	// that spans racks), as topograph does.
	DefaultAcceleratorSubDomainKey = "accelerator.topograph.run/sub-domain"
)

// DefaultTierKeys label a node with its domain at the leaf tier ("block"), the spine tier and the one above it
// ("datacenter"): tiers 1, 2 and 3, or 2, 3 and 4 when the tree has accelerator domains.
var DefaultTierKeys = []string{
	"network.topology.nvidia.com/block",
	"network.topology.nvidia.com/spine",
	"network.topology.nvidia.com/datacenter",
}

// LabelKeys says which node labels fabricmap writes.
type LabelKeys struct {
	// Accelerator is the key for the node's NVLink domain; empty writes none.
	Accelerator string
	// AcceleratorSubDomain is the key for the node's NVLink sub-domain, written for the nodes of accelerator
	// sub-domains (topology.TierNameAcceleratorSubDomain); empty writes none.
	AcceleratorSubDomain string
	// Tiers[i] is the key for the node's domain at switch tier i+1: tier i+1 of the tree, or tier i+2 when
	// the tree has accelerator domains (they take tier 1). Tiers beyond the list are not labelled.
	Tiers []string
}

// DefaultLabelKeys returns the default key set.
func DefaultLabelKeys() LabelKeys {
	return LabelKeys{Accelerator: DefaultAcceleratorKey, AcceleratorSubDomain: DefaultAcceleratorSubDomainKey,
		Tiers: append([]string(nil), DefaultTierKeys...)}
}

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

// AddFlags registers --label-keys, --accelerator-label-key and --accelerator-sub-domain-label-key on fs with
// k's values as defaults: the one set of label-key flags the aggregator and `fabricmap get nodes` share.
func (k *LabelKeys) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&k.Tiers, "label-keys", k.Tiers, "node-label keys for switch tier 1, 2, … in order (e.g. fabric.topograph.run/tier-1,fabric.topograph.run/tier-2)")
	fs.StringVar(&k.Accelerator, "accelerator-label-key", k.Accelerator, "node-label key for the NVLink domain (empty: none)")
	fs.StringVar(&k.AcceleratorSubDomain, "accelerator-sub-domain-label-key", k.AcceleratorSubDomain, "node-label key for the NVLink sub-domain, a rack of an NVLink domain that spans racks (empty: none)")
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
// key set to the node's NVLink domain (hashed when it is no valid label value), and, for a node of an
// accelerator sub-domain, the sub-domain key set to its NVLink sub-domain (hashed likewise). A tier the
// node's branch skips gets no label.
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
