package outputs

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/topology"
)

// NodeFeatureGVK is NodeFeatureDiscovery's NodeFeature: the features and labels one node is to get, which
// NFD's master turns into node labels.
var NodeFeatureGVK = schema.GroupVersionKind{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Kind: "NodeFeature"}

// NodeFeatureNodeLabel names the node a NodeFeature is for (NFD's own label).
const NodeFeatureNodeLabel = "nfd.node.kubernetes.io/node-name"

// NodeFeatureNamePrefix starts the name of every NodeFeature fabricmap writes: fabricmap-<node>.
const NodeFeatureNamePrefix = "fabricmap-"

func (o *Options) nodeFeatures() Kind {
	return Kind{Name: NameNodeFeatures, Formats: []string{"nfd"}, Given: o.NodeFeatures, Prune: true,
		Doc:   "one NFD NodeFeature per node carrying its topology labels, for clusters where NFD alone writes node labels (--node-features)",
		Build: NodeFeatures,
		Owned: owned(NodeFeatureGVK.GroupKind(), "nodefeatures", true),
		Chart: chartsurface.Surface{Values: []string{"aggregator.outputs.nodeFeatures"},
			Rules: []chartsurface.Rule{{Scope: chartsurface.Namespace, APIGroups: []string{NodeFeatureGVK.Group},
				Resources: []string{"nodefeatures"}, Verbs: []string{"get", "list", "create", "patch", "delete"},
				When: []string{"aggregator.outputs.nodeFeatures"},
				Why:  "NFD NodeFeatures, one per node, all labelled as fabricmap's; delete: those of nodes gone"}}}}
}

// NodeFeatures returns one NodeFeature per node the tree places, in env.Namespace, named fabricmap-<node>,
// whose spec.labels are the labels the aggregator would put on the node (hypernodegen.DesiredNodeLabels),
// sorted by node. A node whose name cannot be the value of NodeFeatureNodeLabel (NFD's master finds the node
// by it; a label value holds at most 63 characters) or is too long for the prefix is left out, and
// env.Unwritable is told. An empty or invalid tree is an error.
func NodeFeatures(t *topology.Tree, env Env) ([]Object, error) {
	// An empty or invalid tree gives no NodeFeature rather than none: none would prune every one written.
	if t == nil || len(t.Domains) == 0 {
		return nil, errors.New("NodeFeatures: the tree is empty")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("NodeFeatures: invalid topology tree: %w", err)
	}
	labels := hypernodegen.DesiredNodeLabels(t, env.Evidence, env.LabelKeys)
	out := make([]Object, 0, len(labels))
	for _, node := range slices.Sorted(maps.Keys(labels)) {
		name := NodeFeatureNamePrefix + node
		if msgs := validation.IsValidLabelValue(node); len(msgs) > 0 {
			env.unwritable(NameNodeFeatures, node, fmt.Sprintf("its name cannot be the value of NFD's %s label (%s): NFD cannot label it; give it its labels another way (the aggregator's node labels)", NodeFeatureNodeLabel, msgs[0]))
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			env.unwritable(NameNodeFeatures, node, fmt.Sprintf("NodeFeature name %q is invalid (%s)", name, msgs[0]))
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(NodeFeatureGVK)
		u.SetNamespace(env.Namespace)
		u.SetName(name)
		sel := hypernodegen.OwnedSelector()
		sel[NodeFeatureNodeLabel] = node
		u.SetLabels(sel)
		spec := map[string]any{}
		nodeLabels := map[string]any{}
		for k, v := range labels[node] {
			nodeLabels[k] = v
		}
		spec["labels"] = nodeLabels
		u.Object["spec"] = spec
		out = append(out, Object{Object: u, Field: "spec"})
	}
	return out, nil
}
