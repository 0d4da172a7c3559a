package hypernodegen

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// TreeConfigMapKey is the ConfigMap data key that holds the tree.
const TreeConfigMapKey = "topology.json"

// TreeConfigMapEntry is one domain in the tree ConfigMap, in the shape of the network-topology ConfigMap of
// Koordinator's network-topology-aware scheduling proposal.
type TreeConfigMapEntry struct {
	// Layer is the domain's tier: 1 for the closest domains, growing upward.
	Layer int `json:"layer"`
	// Name is the domain's name.
	Name string `json:"name"`
	// Parents holds the enclosing domain; absent for the root.
	Parents []string `json:"parents,omitempty"`
	// Children are the domains directly below, or, for a bottom domain, its Kubernetes nodes; sorted.
	Children []string `json:"children,omitempty"`
}

// TreeConfigMap returns a ConfigMap in namespace holding the whole tree as one JSON list under
// TreeConfigMapKey: one TreeConfigMapEntry per domain, highest tier first, then by name. The same tree always
// gives the same bytes, so reapplying an unchanged tree writes nothing. Unplaced nodes are not listed. An
// empty or invalid tree, bad names, or a tree too large for a ConfigMap give an error.
func TreeConfigMap(namespace, name string, tree *topology.Tree) (*corev1.ConfigMap, error) {
	for _, msgs := range [][]string{validation.IsDNS1123Label(namespace), validation.IsDNS1123Subdomain(name)} {
		if len(msgs) > 0 {
			return nil, fmt.Errorf("tree ConfigMap %s/%s: invalid namespace or name: %s", namespace, name, msgs[0])
		}
	}
	entries, err := TreeEntries(tree)
	if err != nil {
		return nil, fmt.Errorf("tree ConfigMap %s/%s: %w", namespace, name, err)
	}
	data, err := json.Marshal(entries)
	if err != nil {
		return nil, fmt.Errorf("tree ConfigMap %s/%s: encoding the tree: %w", namespace, name, err)
	}
	if size := len(TreeConfigMapKey) + len(data); size > corev1.MaxSecretSize {
		return nil, fmt.Errorf("tree ConfigMap %s/%s: %d bytes, a ConfigMap holds at most %d", namespace, name, size, corev1.MaxSecretSize)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: OwnedSelector()},
		Data:       map[string]string{TreeConfigMapKey: string(data)},
	}, nil
}

// TreeEntries returns the entries TreeConfigMap writes for tree, highest tier first, then by name.
func TreeEntries(tree *topology.Tree) ([]TreeConfigMapEntry, error) {
	if tree == nil || len(tree.Domains) == 0 {
		return nil, errEmptyTree
	}
	if err := tree.Validate(); err != nil {
		return nil, fmt.Errorf("invalid topology tree: %w", err)
	}
	names := tree.Names()
	out := make([]TreeConfigMapEntry, 0, len(names))
	for _, n := range names {
		d := tree.Domains[n]
		e := TreeConfigMapEntry{Layer: d.Tier, Name: d.Name}
		if d.Parent != "" {
			e.Parents = []string{d.Parent}
		}
		members := d.Children
		if len(members) == 0 {
			members = d.Nodes
		}
		e.Children = slices.Sorted(slices.Values(members))
		out = append(out, e)
	}
	return out, nil
}
