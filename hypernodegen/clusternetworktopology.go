package hypernodegen

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// Koordinator's ClusterNetworkTopology (scheduling.koordinator.sh/v1alpha1, cluster-scoped). koord-scheduler
// reads the one object named "default" and fills its status itself; fabricmap writes the spec only.
const (
	// ClusterNetworkTopologyName is the name koord-scheduler reads.
	ClusterNetworkTopologyName = "default"
	// KoordinatorNodeLayer is Koordinator's built-in layer for a Kubernetes node; it is the bottom layer.
	KoordinatorNodeLayer = "NodeTopologyLayer"
	// KoordinatorClusterLayer is Koordinator's built-in layer for the whole cluster, implied above the top layer.
	KoordinatorClusterLayer = "ClusterTopologyLayer"
)

// ClusterNetworkTopologyGVK is the group, version and kind of Koordinator's ClusterNetworkTopology.
var ClusterNetworkTopologyGVK = schema.GroupVersionKind{
	Group: "scheduling.koordinator.sh", Version: "v1alpha1", Kind: "ClusterNetworkTopology",
}

// LayerNames names the Koordinator topology layers that stand for fabricmap's label-keyed levels. Koordinator
// has no fixed names besides its built-in node and cluster layers; gang annotations refer to these names.
type LayerNames struct {
	// Accelerator names the NVLink-domain layer.
	Accelerator string
	// AcceleratorSubDomain names the NVLink sub-domain layer (racks of an NVLink domain), below Accelerator.
	AcceleratorSubDomain string
	// Tiers[i] names the layer of the tier labelled by LabelKeys.Tiers[i]; a missing or empty entry is
	// named "Tier<i+1>Layer".
	Tiers []string
}

// DefaultLayerNames returns the names Koordinator's documentation uses for the NVLink domain and switch tiers
// 1 to 3 (the leaf, the spine and the tier above, whatever the label style): AcceleratorLayer (and
// AcceleratorSubDomainLayer below it), then BlockLayer, SpineLayer and DatacenterLayer.
func DefaultLayerNames() LayerNames {
	return LayerNames{Accelerator: "AcceleratorLayer", AcceleratorSubDomain: "AcceleratorSubDomainLayer", Tiers: []string{"BlockLayer", "SpineLayer", "DatacenterLayer"}}
}

func (n LayerNames) forLevel(l treeLevel) string {
	if l.accelerator {
		return n.Accelerator
	}
	if l.subDomain {
		return n.AcceleratorSubDomain
	}
	if l.index < len(n.Tiers) && n.Tiers[l.index] != "" {
		return n.Tiers[l.index]
	}
	return fmt.Sprintf("Tier%dLayer", l.index+1)
}

// ClusterNetworkTopologyOption tunes ClusterNetworkTopology.
type ClusterNetworkTopologyOption func(*cntOptions)

type cntOptions struct {
	name   string
	layers LayerNames
}

// WithClusterNetworkTopologyName names the object; koord-scheduler only reads ClusterNetworkTopologyName.
func WithClusterNetworkTopologyName(name string) ClusterNetworkTopologyOption {
	return func(o *cntOptions) { o.name = name }
}

// WithLayerNames replaces DefaultLayerNames.
func WithLayerNames(names LayerNames) ClusterNetworkTopologyOption {
	return func(o *cntOptions) { o.layers = names }
}

// ClusterNetworkTopology returns Koordinator's ClusterNetworkTopology for tree: one spec.networkTopologySpec
// entry per label-keyed level the tree has (see KueueTopology for which levels those are), top first, each
// naming its parent layer and the node-label key fabricmap writes for it, and NodeTopologyLayer last. The
// object is unstructured because Koordinator's Go module cannot be imported next to this project's
// Kubernetes libraries.
//
// koord-scheduler leaves out of its tree any node that lacks a layer's label, except for the layer directly
// above the nodes (the accelerator layer, when there is one).
func ClusterNetworkTopology(keys LabelKeys, tree *topology.Tree, opts ...ClusterNetworkTopologyOption) (*unstructured.Unstructured, error) {
	o := cntOptions{name: ClusterNetworkTopologyName, layers: DefaultLayerNames()}
	for _, opt := range opts {
		opt(&o)
	}
	if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
		return nil, fmt.Errorf("ClusterNetworkTopology name %q is invalid: %s", o.name, msgs[0])
	}
	levels, err := treeLevels(keys, tree)
	if err != nil {
		return nil, fmt.Errorf("building ClusterNetworkTopology: %w", err)
	}
	entries := make([]any, 0, len(levels)+1)
	seen := map[string]bool{KoordinatorNodeLayer: true, KoordinatorClusterLayer: true}
	parent := ""
	for _, l := range levels {
		layer := o.layers.forLevel(l)
		if layer == "" || seen[layer] {
			return nil, fmt.Errorf("building ClusterNetworkTopology: layer name %q for label key %s is empty, reserved or used twice", layer, l.key)
		}
		seen[layer] = true
		entries = append(entries, layerEntry(layer, parent, l.key))
		parent = layer
	}
	entries = append(entries, layerEntry(KoordinatorNodeLayer, parent, ""))

	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"networkTopologySpec": entries},
	}}
	u.SetGroupVersionKind(ClusterNetworkTopologyGVK)
	u.SetName(o.name)
	u.SetLabels(OwnedSelector())
	return u, nil
}

// layerEntry is one spec.networkTopologySpec item; parent and key are left out when empty.
func layerEntry(layer, parent, key string) map[string]any {
	e := map[string]any{"topologyLayer": layer}
	if parent != "" {
		e["parentTopologyLayer"] = parent
	}
	if key != "" {
		e["labelKey"] = []any{key}
	}
	return e
}

// treeLevel is one level of the tree that nodes carry a label for.
type treeLevel struct {
	// key is the node-label key of the level.
	key string
	// accelerator marks the NVLink-domain level and subDomain the NVLink sub-domain level; otherwise index is
	// the level's place in LabelKeys.Tiers.
	accelerator, subDomain bool
	index                  int
}

// errEmptyTree is returned for a nil tree or one without domains.
var errEmptyTree = errors.New("the topology tree has no domains")

// treeLevels returns the label-keyed levels of tree, top first, as NodeLabels labels every node: every switch
// tier from the root's down to the leaf that has a key in keys.Tiers (a tier the tree skips in some branch
// is still a level, NodeLabels fills it), then the accelerator level when the tree has accelerator domains
// (TierName "accelerator") and keys.Accelerator is set, then the sub-domain level when it has accelerator
// domains and keys.AcceleratorSubDomain is set (NodeLabels writes the sub-domain whenever the domain: a rack,
// else the domain's value). Accelerator domains must share one tier below every other domain; the switch
// tiers are counted from the one above them, so a leaf is keys.Tiers[0] either way. Tiers without a key are
// left out, as NodeLabels leaves them unlabelled.
func treeLevels(keys LabelKeys, tree *topology.Tree) ([]treeLevel, error) {
	if tree == nil || len(tree.Domains) == 0 {
		return nil, errEmptyTree
	}
	if err := tree.Validate(); err != nil {
		return nil, fmt.Errorf("invalid topology tree: %w", err)
	}
	if err := keys.Validate(); err != nil {
		return nil, err
	}
	shape, err := shapeOf(tree)
	if err != nil {
		return nil, err
	}
	var levels []treeLevel
	for i := shape.topIndex; i >= 0; i-- {
		if i < len(keys.Tiers) && keys.Tiers[i] != "" {
			levels = append(levels, treeLevel{key: keys.Tiers[i], index: i})
		}
	}
	if shape.accelTier > 0 && keys.Accelerator != "" {
		levels = append(levels, treeLevel{key: keys.Accelerator, accelerator: true})
	}
	if shape.accelTier > 0 && keys.AcceleratorSubDomain != "" {
		levels = append(levels, treeLevel{key: keys.AcceleratorSubDomain, subDomain: true})
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("no tier of the tree has a node-label key (switch tiers up to index %d, keys %v)", shape.topIndex, keys.All())
	}
	used := map[string]bool{}
	for _, l := range levels {
		if used[l.key] {
			return nil, fmt.Errorf("label key %s stands for two levels of the tree", l.key)
		}
		used[l.key] = true
	}
	return levels, nil
}

// acceleratorTier returns the tier of the tree's accelerator domains, 0 when it has none. They must all sit
// at one tier, below every switch domain, and their sub-domains (topology.TierNameAcceleratorSubDomain), when
// there are any, at one tier below them.
func acceleratorTier(tree *topology.Tree) (int, error) {
	accel, sub, lowestOther := 0, 0, 0
	for _, name := range tree.Names() {
		d := tree.Domains[name]
		switch d.TierName {
		case topology.TierNameAccelerator:
			if accel != 0 && d.Tier != accel {
				return 0, fmt.Errorf("accelerator domains sit at tiers %d and %d; they must share one", accel, d.Tier)
			}
			accel = d.Tier
		case topology.TierNameAcceleratorSubDomain:
			if sub != 0 && d.Tier != sub {
				return 0, fmt.Errorf("accelerator sub-domains sit at tiers %d and %d; they must share one", sub, d.Tier)
			}
			sub = d.Tier
		default:
			if lowestOther == 0 || d.Tier < lowestOther {
				lowestOther = d.Tier
			}
		}
	}
	if sub != 0 && sub >= accel {
		return 0, fmt.Errorf("accelerator sub-domains at tier %d are not below the accelerator domains (tier %d)", sub, accel)
	}
	if accel != 0 && lowestOther != 0 && lowestOther <= accel {
		return 0, fmt.Errorf("accelerator domains at tier %d are not below every switch domain (one is at tier %d)", accel, lowestOther)
	}
	return accel, nil
}

// isAccelerator reports whether d is an accelerator domain or sub-domain: below the switch tiers, labelled by
// LabelKeys.Accelerator and AcceleratorSubDomain rather than by a tier key.
func isAccelerator(d *topology.Domain) bool {
	return d.TierName == topology.TierNameAccelerator || d.TierName == topology.TierNameAcceleratorSubDomain
}
