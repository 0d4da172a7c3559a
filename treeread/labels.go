package treeread

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// Koordinator's built-in layers: a node, and the whole cluster above the top layer.
const (
	nodeLayer    = hypernodegen.KoordinatorNodeLayer
	clusterLayer = hypernodegen.KoordinatorClusterLayer
)

// Layer is one level of a Koordinator ClusterNetworkTopology: its name, the layer above, and the node label
// whose value names a node's domain at this level.
type Layer struct {
	// Name is the layer's name (a gang's HardTierName may name it).
	Name string
	// Parent is the layer above; empty or ClusterTopologyLayer for the top.
	Parent string
	// LabelKey is the node label whose value names the node's domain at this layer.
	LabelKey string
}

// ParseClusterNetworkTopology reads the layers of a ClusterNetworkTopology object (JSON): spec.networkTopologySpec
// entries {topologyLayer, parentTopologyLayer, labelKey: [key]} as Koordinator's API has them, or the seed's
// spec.hierarchy entries {layerName, parentTopologyLayer, labelKey: key}. Layers without a label key (the node
// layer) are left out; the result is ordered top first.
func ParseClusterNetworkTopology(data []byte) ([]Layer, error) {
	var obj struct {
		Spec struct {
			NetworkTopologySpec []struct {
				TopologyLayer       string   `json:"topologyLayer"`
				ParentTopologyLayer string   `json:"parentTopologyLayer"`
				LabelKey            []string `json:"labelKey"`
			} `json:"networkTopologySpec"`
			Hierarchy []struct {
				LayerName           string `json:"layerName"`
				ParentTopologyLayer string `json:"parentTopologyLayer"`
				LabelKey            string `json:"labelKey"`
			} `json:"hierarchy"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("reading the ClusterNetworkTopology: %w", err)
	}
	var layers []Layer
	for i, e := range obj.Spec.NetworkTopologySpec {
		if len(e.LabelKey) > 1 {
			return nil, inputErr(fmt.Sprintf("spec.networkTopologySpec[%d].labelKey", i), "%d keys; placement reads one", len(e.LabelKey))
		}
		l := Layer{Name: e.TopologyLayer, Parent: e.ParentTopologyLayer}
		if len(e.LabelKey) == 1 {
			l.LabelKey = e.LabelKey[0]
		}
		layers = append(layers, l)
	}
	for _, e := range obj.Spec.Hierarchy {
		layers = append(layers, Layer{Name: e.LayerName, Parent: e.ParentTopologyLayer, LabelKey: e.LabelKey})
	}
	return orderLayers(layers)
}

// orderLayers orders the keyed layers top first by following parent links; a layer whose parent is unknown
// (or the cluster layer) is the top. Two tops or a layer named twice is an error.
func orderLayers(layers []Layer) ([]Layer, error) {
	byName := map[string]Layer{}
	childOf := map[string]string{}
	for _, l := range layers {
		if l.Name == "" {
			return nil, inputErr("spec.networkTopologySpec[].topologyLayer", "a layer has no name")
		}
		if _, dup := byName[l.Name]; dup {
			return nil, inputErr("spec.networkTopologySpec["+l.Name+"]", "layer named twice")
		}
		byName[l.Name] = l
	}
	top := ""
	for _, l := range layers {
		if _, ok := byName[l.Parent]; !ok || l.Parent == clusterLayer {
			if top != "" && l.Name != nodeLayer {
				return nil, inputErr("spec.networkTopologySpec["+l.Name+"].parentTopologyLayer", "layers %q and %q both sit at the top", top, l.Name)
			}
			if l.Name != nodeLayer {
				top = l.Name
			}
			continue
		}
		if other, dup := childOf[l.Parent]; dup {
			return nil, inputErr("spec.networkTopologySpec["+l.Name+"].parentTopologyLayer", "layer %q already has child %q", l.Parent, other)
		}
		childOf[l.Parent] = l.Name
	}
	var out []Layer
	for cur := top; cur != "" && len(out) <= len(layers); cur = childOf[cur] {
		if l := byName[cur]; l.LabelKey != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, inputErr("spec.networkTopologySpec", "no layer has a label key")
	}
	return out, nil
}

// TreeFromLabels builds a tree from layers (top first) and the nodes' labels: the domain of a node at a layer is
// named by its label value there, the bottom keyed layer is tier 1. A value equal to the one of the layer below
// is a tier the node's branch skips (the domain below stands there too, as fabricmap writes such labels). A node
// lacking a layer's label is left out and returned; a value found under two different parents is an error
// naming the label.
func TreeFromLabels(layers []Layer, nodeLabels map[string]map[string]string) (*topology.Tree, []string, error) {
	t := topology.NewTree()
	var leftOut []string
	names := make([]string, 0, len(nodeLabels))
	for n := range nodeLabels {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		lbl := nodeLabels[n]
		path := make([]string, len(layers))
		ok := true
		for i, l := range layers {
			if path[i] = lbl[l.LabelKey]; path[i] == "" {
				ok = false
				break
			}
		}
		if !ok {
			leftOut = append(leftOut, n)
			continue
		}
		parent := ""
		for i, l := range layers {
			if i+1 < len(layers) && path[i] == path[i+1] {
				continue // a tier the node's branch skips: the key names the domain below it (as fabricmap's label styles write it)
			}
			name, tier := path[i], len(layers)-i
			d, exists := t.Domains[name]
			switch {
			case !exists:
				d = &topology.Domain{Name: name, Tier: tier, TierName: l.Name, Parent: parent}
				_ = t.Add(d)
				if parent != "" {
					p := t.Domains[parent]
					p.Children = append(p.Children, name)
				}
			case d.Tier != tier:
				return nil, nil, inputErr("nodes["+n+"].labels["+l.LabelKey+"]", "value %q also names a domain of layer %q", name, d.TierName)
			case d.Parent != parent:
				return nil, nil, inputErr("nodes["+n+"].labels["+l.LabelKey+"]", "value %q sits under both %q and %q", name, d.Parent, parent)
			}
			parent = name
		}
		leaf := t.Domains[parent]
		leaf.Nodes = append(leaf.Nodes, n)
	}
	for _, d := range t.Domains {
		slices.Sort(d.Children)
	}
	return t, leftOut, nil
}
