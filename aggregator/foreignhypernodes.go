package aggregator

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// ReasonForeignHyperNodes is the Warning Event on the leader Lease naming the HyperNodes not made by fabricmap
// whose members are fabricmap's nodes or HyperNodes (Volcano's own discovery running beside fabricmap): each
// such member has two parents, and Volcano's scheduler reads a broken tree.
const ReasonForeignHyperNodes = "ForeignHyperNodes"

// maxNamedForeign is how many foreign HyperNodes one Event describes; the rest are counted.
const maxNamedForeign = 5

// noteForeignHyperNodes finds, among the HyperNodes fabricmap did not make, those over the nodes the tree
// places or over fabricmap's own HyperNodes (hypernodegen.ForeignHyperNodes), sets
// fabricmap_aggregator_foreign_hypernodes, and says so when the set changed since it last said: a Warning
// log line and Event on the leader Lease that name them and the setting to turn off. They are never edited
// or deleted: another writer owns them.
func (gs *guardStage) noteForeignHyperNodes(ctx context.Context, foreign, owned []topologyv1alpha1.HyperNode, placed map[string]bool,
	nodes map[string]*metav1.PartialObjectMetadata) {
	var found []hypernodegen.ForeignHyperNode
	if len(foreign) > 0 {
		resolved, err := gs.liveLabelMembers(ctx, foreign) // selectors on keys the Node cache does not keep
		if err != nil {
			gs.r.Log.Warn("foreign HyperNodes that select Nodes by label: their members are read from the cache alone", "err", err)
		} else {
			foreign = resolved
		}
		labels := make(map[string]map[string]string, len(placed))
		for n := range placed {
			if m := nodes[n]; m != nil {
				labels[n] = m.Labels
			}
		}
		found = hypernodegen.ForeignHyperNodes(append(append([]topologyv1alpha1.HyperNode(nil), owned...), foreign...), placed, labels)
	}
	gs.r.Metrics.foreignHyperNodes.Set(float64(len(found)))
	var said strings.Builder
	for _, f := range found {
		said.WriteString(f.Name + "=" + strings.Join(f.Members, ",") + "\n")
	}
	if said.String() == gs.foreignSaid {
		return
	}
	gs.foreignSaid = said.String()
	if len(found) == 0 {
		gs.r.Log.Info("no HyperNode made by another writer holds fabricmap's nodes any more")
		return
	}
	names := make([]string, 0, len(found))
	for _, f := range found {
		names = append(names, f.Name)
	}
	gs.r.Log.Warn("HyperNodes not made by fabricmap hold fabricmap's nodes: each such node has two parents; left alone",
		"count", len(found), "hypernodes", head(names, 20), "fix", hypernodegen.ForeignAdvice)
	described := found
	more := ""
	if len(described) > maxNamedForeign {
		more = fmt.Sprintf(" and %d more", len(described)-maxNamedForeign)
		described = described[:maxNamedForeign]
	}
	summaries := make([]string, 0, len(described))
	for _, f := range described {
		summaries = append(summaries, f.Summary())
	}
	gs.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonForeignHyperNodes,
		"%d HyperNodes not made by fabricmap hold fabricmap's nodes or HyperNodes, which now have two parents (Volcano's scheduler reads a broken tree): %s%s; fabricmap leaves them alone: %s",
		len(found), strings.Join(summaries, "; "), more, hypernodegen.ForeignAdvice)
}
