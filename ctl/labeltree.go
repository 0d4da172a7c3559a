package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// labelSource is the Source of the domains of a tree read from the nodes' labels.
const labelSource = "labels"

// treeFromNodeLabels is the tree the nodes' own topology labels state (keys' tier keys, leaf first), for a
// cluster without HyperNodes (no Volcano: Kueue or Koordinator read the labels): each tier key some node
// carries is a layer, top first, its domains of Source labelSource. The tiers are named as the aggregator's
// tree names them (so as its HyperNodes say): the leaf, spine and core tiers by number, the top one the
// root's (topology.TierNameRoot) when it is the root's (treeread.ReadLabelTree, NameRoot). nil when no node carries a key; what is
// read from (what: "the tree below is", …) or what cannot be read is said on errw.
func treeFromNodeLabels(errw io.Writer, nodes map[string]map[string]string, keys hypernodegen.LabelKeys, what string) *topology.Tree {
	lt, err := treeread.ReadLabelTree(nodes, keys, treeread.LabelTreeOptions{NameRoot: true, Source: labelSource})
	switch {
	case errors.Is(err, treeread.ErrNoTopologyLabels):
		return nil
	case err != nil:
		fmt.Fprintf(errw, "warning: no HyperNodes, and the nodes' labels do not form a tree: %s\n", topology.Printable(err.Error()))
		return nil
	}
	keysRead := make([]string, len(lt.Layers))
	for i, l := range lt.Layers {
		keysRead[i] = l.LabelKey
	}
	fmt.Fprintf(errw, "No HyperNodes: %s read from the nodes' labels (%s).\n", what, strings.Join(keysRead, ", "))
	return lt.Tree
}

// labelView is what the nodes' labels state in a cluster without the HyperNode CRD: the tree, read by keys.
type labelView struct {
	tree  *topology.Tree
	nodes map[string]map[string]string
	keys  hypernodegen.LabelKeys
}

// readLabelView reads the tree the nodes' labels state, by keys when known (flags, or the aggregator's Lease:
// publishedLabelKeys), else by the named style the labels are written in (hypernodegen.DetectStyle), saying on
// errw what is read from them (what: "the tree below is", …). noCRD when the labels state no tree.
func readLabelView(ctx context.Context, r client.Reader, errw io.Writer, keys hypernodegen.LabelKeys, known bool, what string, noCRD error) (labelView, error) {
	nodes, err := listNodeLabels(ctx, r)
	if err != nil {
		return labelView{}, err
	}
	if !known {
		detected, ok := hypernodegen.DetectStyle(nodes)
		if !ok {
			return labelView{}, noCRD
		}
		keys = detected
	}
	t := treeFromNodeLabels(errw, nodes, keys, what)
	if t == nil {
		return labelView{}, noCRD
	}
	return labelView{tree: t, nodes: nodes, keys: keys}, nil
}

// hyperNodes are the HyperNodes fabricmap would write for the tree (hypernodegen.HyperNodes, nodes selected
// by exact name): what `get hypernodes -o json` prints in a cluster that has none.
func (v labelView) hyperNodes() ([]topologyv1alpha1.HyperNode, error) {
	items, err := hypernodegen.HyperNodes(v.tree, hypernodegen.Options{NodeSelector: hypernodegen.SelectorExact, LabelKeys: v.keys})
	if err != nil {
		return nil, fmt.Errorf("making HyperNodes of the nodes' labels: %w", err)
	}
	return items, nil
}

// publishedLabelKeys reads the label keys the leading aggregator states on its leader-election Lease
// (wellknown.LabelKeysAnnotation), found in any namespace by wellknown.AggregatorLeaseLabel whatever its
// name; false when none states them (no aggregator, or no right to list Leases), and the caller goes on without.
func publishedLabelKeys(cmd *cobra.Command) (hypernodegen.LabelKeys, bool) {
	cfg, err := restConfig(cmd)
	if err != nil {
		return hypernodegen.LabelKeys{}, false
	}
	c, err := newClient(cfg)
	if err != nil {
		return hypernodegen.LabelKeys{}, false
	}
	var leases coordinationv1.LeaseList
	if err := c.List(cmd.Context(), &leases, client.MatchingLabels{wellknown.AggregatorLeaseLabel: "true"}); err != nil {
		return hypernodegen.LabelKeys{}, false
	}
	for _, l := range leases.Items {
		if v, ok := l.Annotations[wellknown.LabelKeysAnnotation]; ok {
			if keys, err := hypernodegen.DecodeLabelKeys(v); err == nil {
				return keys, true
			}
		}
	}
	return hypernodegen.LabelKeys{}, false
}
