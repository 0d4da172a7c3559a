package treeread

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// ParseTree reads a tree from JSON in any of the forms fabricmap writes or reads: the tree ConfigMap's list
// of {layer, name, parents, children} (or the ConfigMap itself), a List or HyperNodeList of HyperNodes
// (`fabricmap topology -o json`, `kubectl get hypernodes -o json`), a Koordinator ClusterNetworkTopology, or a
// topology.Tree ({"domains": …}). nodeLabels (node name → labels) resolves HyperNode members selected by
// regex or label and places the nodes of a ClusterNetworkTopology (whose nodes lacking a layer's label are left
// out); it may be nil when every member is selected by name. Malformed input is a *placement.InputError
// naming the field.
func ParseTree(data []byte, nodeLabels map[string]map[string]string) (*topology.Tree, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var entries []hypernodegen.TreeConfigMapEntry
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, fmt.Errorf("reading the tree entries: %w", err)
		}
		return treeFromEntries(entries)
	}
	var probe struct {
		Kind    string            `json:"kind"`
		Data    map[string]string `json:"data"`
		Domains json.RawMessage   `json:"domains"`
		Items   json.RawMessage   `json:"items"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("reading the tree: %w", err)
	}
	switch {
	case probe.Kind == hypernodegen.ClusterNetworkTopologyGVK.Kind:
		if nodeLabels == nil {
			return nil, inputErr("kind", "a ClusterNetworkTopology: the nodes (names and labels) are needed to place its nodes")
		}
		layers, err := ParseClusterNetworkTopology(data)
		if err != nil {
			return nil, err
		}
		t, _, err := TreeFromLabels(layers, nodeLabels)
		return t, err
	case probe.Kind == "ConfigMap":
		inner, ok := probe.Data[hypernodegen.TreeConfigMapKey]
		if !ok {
			return nil, inputErr("data["+hypernodegen.TreeConfigMapKey+"]", "the ConfigMap has no tree")
		}
		return ParseTree([]byte(inner), nodeLabels)
	case probe.Domains != nil:
		var t topology.Tree
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, fmt.Errorf("reading the tree: %w", err)
		}
		return &t, nil
	case probe.Items != nil:
		var list topologyv1alpha1.HyperNodeList
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("reading the HyperNodes: %w", err)
		}
		for i, it := range list.Items {
			if it.Kind != "" && it.Kind != "HyperNode" {
				return nil, inputErr(fmt.Sprintf("items[%d].kind", i), "%q, want HyperNode", it.Kind)
			}
		}
		return TreeFromHyperNodes(list.Items, nodeLabels)
	}
	return nil, inputErr("tree", "not a tree: want a list of {layer,name,parents,children}, a List of HyperNodes, a ClusterNetworkTopology or {\"domains\": …}")
}

// treeFromEntries turns ConfigMap entries into a tree.
func treeFromEntries(entries []hypernodegen.TreeConfigMapEntry) (*topology.Tree, error) {
	t := topology.NewTree()
	for i, e := range entries {
		if err := t.Add(&topology.Domain{Name: e.Name, Tier: e.Layer}); err != nil {
			return nil, inputErr(fmt.Sprintf("[%d].name", i), "%v", err)
		}
		if len(e.Parents) > 1 {
			return nil, inputErr("["+e.Name+"].parents", "%d parents: a domain has at most one", len(e.Parents))
		}
	}
	for _, e := range entries {
		d := t.Domains[e.Name]
		if len(e.Parents) == 1 {
			d.Parent = e.Parents[0]
		}
		for _, c := range e.Children {
			if _, ok := t.Domains[c]; ok {
				d.Children = append(d.Children, c)
			} else {
				d.Nodes = append(d.Nodes, c)
			}
		}
		slices.Sort(d.Children)
		slices.Sort(d.Nodes)
	}
	return t, nil
}
