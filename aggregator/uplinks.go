package aggregator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/wording"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// noteUplinks finds the nodes that lost all their uplink evidence this pass: in tree.Unplaced, with a report
// still in use, and placed by prev (the tree before this one) or already known to have lost them (by this
// reconciler, or by a previous leader through UplinkLostAnnotation, whose time is kept). A node newly found is
// logged and summed up in one Warning Event on the leader-election Lease (its own Event comes with its health
// finding, noteFindings); a node placed again gets a Normal Event. The gauge of nodes without uplink evidence
// follows; lostUplinks keeps them for fabric health, the node labels and the next pass.
func (h *healthStage) noteUplinks(ctx context.Context, tree, prev *topology.Tree, reports []*v1alpha1.NodeFabricReport, dropped []string,
	nodes map[string]*metav1.PartialObjectMetadata) {
	inUse := make(map[string]bool, len(reports))
	for i := range reports {
		inUse[reports[i].Name] = true
	}
	for _, n := range dropped {
		delete(inUse, n)
	}
	now := h.r.now()
	prevLeaf := health.NodeLeaves(prev)
	next := map[string]health.LostUplink{}
	var fresh []health.LostUplink
	for _, n := range tree.Unplaced {
		if !inUse[n] {
			continue
		}
		if l, ok := h.lostUplinks[n]; ok {
			next[n] = l
			continue
		}
		if l, ok := h.annotatedLoss(n, nodes); ok {
			next[n] = l // a previous leader's finding, with its time
			continue
		}
		if leaf, ok := prevLeaf[n]; ok {
			l := health.LostUplink{Node: n, Leaf: leaf, Since: now}
			next[n] = l
			fresh = append(fresh, l)
		}
	}
	leaves := health.NodeLeaves(tree)
	for _, n := range slices.Sorted(maps.Keys(h.lostUplinks)) {
		if _, still := next[n]; still {
			continue
		}
		l := h.lostUplinks[n]
		leaf, placed := leaves[n]
		if !placed {
			h.r.Log.Info("node that had lost its uplinks is no longer followed: its report is gone or no longer used", "node", n, "leaf", l.Leaf)
			continue
		}
		h.r.Log.Info("node placed again after losing its uplinks", "node", n, "leaf", leaf, "lostLeaf", l.Leaf, "lostFor", now.Sub(l.Since).Round(time.Second))
		h.r.nodeEvent(n, nodes, corev1.EventTypeNormal, pipeline.ReasonUplinkRestored,
			"the node's report places it again, in %s; it had no uplink evidence since %s", leaf, l.Since.UTC().Format(time.RFC3339))
	}
	h.lostUplinks = next
	h.r.Metrics.nodesWithoutUplink.Set(float64(len(next)))
	if len(fresh) > 0 {
		h.sayUplinksLost(ctx, fresh)
	}
}

// withUplinkLost returns the UplinkLostAnnotation value wanted on each node that lost its uplinks and has a Node
// (node → value), and lists in desired (node → labels fabricmap wants) every node whose annotation is to be
// written or removed, with the labels fabricmap owns on it as they are when the pass wants none there.
func (h *healthStage) withUplinkLost(desired map[string]map[string]string, nodes map[string]*metav1.PartialObjectMetadata, keys []string) map[string]string {
	out := make(map[string]string, len(h.lostUplinks))
	for n, l := range h.lostUplinks {
		if node, ok := nodes[n]; ok {
			out[n] = pipeline.UplinkLostValue(l)
			if _, listed := desired[n]; !listed {
				desired[n] = ownedAsIs(node, keys)
			}
		}
	}
	for n, node := range nodes {
		if _, lost := out[n]; lost || !annotationDiffers(node, wellknown.UplinkLostAnnotation, "") {
			continue
		}
		if _, listed := desired[n]; !listed {
			desired[n] = ownedAsIs(node, keys)
		}
	}
	return out
}

// annotatedLoss is the lost uplink a previous leader stated on node n (UplinkLostAnnotation); a value it cannot
// read is logged and ignored.
func (h *healthStage) annotatedLoss(n string, nodes map[string]*metav1.PartialObjectMetadata) (health.LostUplink, bool) {
	node, ok := nodes[n]
	if !ok {
		return health.LostUplink{}, false
	}
	v, ok := node.Annotations[wellknown.UplinkLostAnnotation]
	if !ok {
		return health.LostUplink{}, false
	}
	l, err := pipeline.ParseUplinkLost(n, v)
	if err != nil {
		h.r.Log.Warn("node annotation ignored", "node", n, "err", err)
		return health.LostUplink{}, false
	}
	return l, true
}

// lostUplinkList returns the nodes without uplink evidence, sorted by node, for fabric health.
func (h *healthStage) lostUplinkList() []health.LostUplink {
	out := make([]health.LostUplink, 0, len(h.lostUplinks))
	for _, n := range slices.Sorted(maps.Keys(h.lostUplinks)) {
		out = append(out, h.lostUplinks[n])
	}
	return out
}

// sayUplinksLost logs the nodes found without uplink evidence this pass and records one Warning Event on the
// leader-election Lease that sums them up: how many, the first of them, and their leaves with how many nodes
// each lost.
func (h *healthStage) sayUplinksLost(ctx context.Context, fresh []health.LostUplink) {
	names := make([]string, 0, len(fresh))
	perLeaf := map[string]int{}
	for _, l := range fresh {
		names = append(names, l.Node)
		perLeaf[l.Leaf]++
	}
	leaves := make([]string, 0, len(perLeaf))
	for _, leaf := range slices.Sorted(maps.Keys(perLeaf)) {
		leaves = append(leaves, fmt.Sprintf("%s (%d)", leaf, perLeaf[leaf]))
	}
	h.r.Log.Warn("nodes lost all their uplink evidence: their reports name no switch that places them; they have no topology now",
		"count", len(fresh), "nodes", head(names, 20), "leaves", leaves, "labelHold", h.r.Config.UnplacedLabelHold)
	h.r.fabricEvent(ctx, corev1.EventTypeWarning, pipeline.ReasonNodesLostUplinks,
		"%d %s lost all uplink evidence (no report of theirs names a switch that places them): %s; leaves: %s. They have no topology now; `fabricmap get health` lists them",
		len(fresh), wording.Plural(len(fresh), "node", "nodes"), wording.Head(names, 10), strings.Join(leaves, ", "))
}
