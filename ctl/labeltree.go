package ctl

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// treeFromNodeLabels is the tree the nodes' own topology labels state (keys' tier keys, leaf first), for a
// cluster without HyperNodes (no Volcano: Kueue or Koordinator read the labels): each tier key some node
// carries is a layer, top first. nil when no node carries one; what cannot be read is said on errw.
func treeFromNodeLabels(errw io.Writer, nodes map[string]map[string]string, keys hypernodegen.LabelKeys) *topology.Tree {
	var layers []treeread.Layer
	for i := len(keys.Tiers) - 1; i >= 0; i-- {
		key := keys.Tiers[i]
		if key == "" || !slices.ContainsFunc(mapsValues(nodes), func(l map[string]string) bool { return l[key] != "" }) {
			continue
		}
		layers = append(layers, treeread.Layer{Name: switchTierName(i + 1), LabelKey: key})
	}
	if len(layers) == 0 {
		return nil
	}
	t, _, err := treeread.TreeFromLabels(layers, nodes)
	if err != nil {
		fmt.Fprintf(errw, "warning: no HyperNodes, and the nodes' labels do not form a tree: %s\n", topology.Printable(err.Error()))
		return nil
	}
	keysRead := make([]string, len(layers))
	for i, l := range layers {
		keysRead[i] = l.LabelKey
	}
	fmt.Fprintf(errw, "No HyperNodes: the tree below is read from the nodes' labels (%s).\n", strings.Join(keysRead, ", "))
	return t
}

// mapsValues returns the values of m.
func mapsValues(m map[string]map[string]string) []map[string]string {
	out := make([]map[string]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// switchTierName names switch tier n (1: the leaf) as the tree does where its tiers are plain switch tiers.
func switchTierName(n int) string {
	switch n {
	case 1:
		return topology.TierNameLeaf
	case 2:
		return topology.TierNameSpine
	case 3:
		return topology.TierNameCore
	}
	return fmt.Sprintf("tier %d", n)
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
