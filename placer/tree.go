package placer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// ErrNoTopology means the cluster has neither fabricmap's HyperNodes nor a ClusterNetworkTopology.
var ErrNoTopology = errors.New("no topology: no HyperNode owned by fabricmap and no ClusterNetworkTopology " + hypernodegen.ClusterNetworkTopologyName)

// ReadTree reads the topology tree: the HyperNodes fabricmap owns (app.kubernetes.io/managed-by=fabricmap) or,
// when there are none, Koordinator's ClusterNetworkTopology and the nodes' labels. hyperNodes lists HyperNodes
// (a cache restricted to owned ones is fine); live reads the ClusterNetworkTopology as an unstructured object.
// Objects that describe no single tree (a HyperNode member of two others, a label value under two parents, as
// while the aggregator rewrites the tree) are a *placement.InputError (inconsistentTree).
func ReadTree(ctx context.Context, hyperNodes, live client.Reader, nodes []corev1.Node) (*topology.Tree, error) {
	var hns topologyv1alpha1.HyperNodeList
	if err := hyperNodes.List(ctx, &hns, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing HyperNodes: %w", err)
	}
	if len(hns.Items) > 0 {
		// In name order, so that of several problems (a tree in transition has many) the same one is named
		// on every pass, whatever order the cache lists them in.
		slices.SortFunc(hns.Items, func(a, b topologyv1alpha1.HyperNode) int { return strings.Compare(a.Name, b.Name) })
		t, err := treeread.TreeFromHyperNodes(hns.Items, NodeLabels(nodes))
		if err != nil {
			return nil, fmt.Errorf("the HyperNodes: %w", err)
		}
		return t, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(hypernodegen.ClusterNetworkTopologyGVK)
	err := live.Get(ctx, client.ObjectKey{Name: hypernodegen.ClusterNetworkTopologyName}, u)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, ErrNoTopology
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ClusterNetworkTopology: %w", err)
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the ClusterNetworkTopology: %w", err)
	}
	layers, err := treeread.ParseClusterNetworkTopology(data)
	if err != nil {
		return nil, fmt.Errorf("the ClusterNetworkTopology: %w", err)
	}
	t, _, err := treeread.TreeFromLabels(layers, NodeLabels(nodes))
	if err != nil {
		return nil, fmt.Errorf("the ClusterNetworkTopology and node labels: %w", err)
	}
	return t, nil
}

// hardTier resolves a gang's MustGather layers to the lowest tier among them: a layer is a tier name of the
// fabric (a HyperNode tierName, a ClusterNetworkTopology layer) or one of Koordinator's default layer names
// for fabricmap's tiers (BlockLayer = tier 1, SpineLayer = tier 2, …). 0 when there is none.
func hardTier(f *placement.Fabric, layers []string) (int, error) {
	best := 0
	for _, l := range layers {
		t, ok := f.TierByName(l)
		if !ok {
			for i, name := range hypernodegen.DefaultLayerNames().Tiers {
				if name == l {
					t, ok = i+1, true
				}
			}
		}
		if !ok {
			return 0, fmt.Errorf("MustGather layer %q is no tier of the topology (tiers: %v)", l, f.Tiers())
		}
		if best == 0 || t < best {
			best = t
		}
	}
	return best, nil
}
