package aggregator

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/wording"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// switchLoss is what the reconciler keeps of lost switches from one pass to the next.
type switchLoss struct {
	// recall is the last pass's (health.SwitchRecall): its tree's switches and each node's.
	recall *health.SwitchRecall
	// lost are the placed nodes that lost switches, by node.
	lost map[string]lostSwitch
	// loaded is set once the losses a previous leader stated on the Nodes have been read.
	loaded bool
}

// lostSwitch is one node's loss, and whether its Node was seen carrying SwitchLostAnnotation: once it was,
// the annotation's absence is an admin's acknowledgement.
type lostSwitch struct {
	health.LostSwitch
	shown bool
}

// noteLostSwitches finds the placed nodes that lost some of their switches this pass (inputs: every source's
// evidence; tree: the tree inferred from it). It recalls the pass (health.RecallSwitches) and compares it with
// the last one (health.DetectLostSwitches), which costs one comparison of bit sets unless a switch of the last
// tree is gone. A loss lasts until its switches are back in the tree (a Normal SwitchRestored Event on the
// Node), the node is no longer placed, or an admin removes the node's SwitchLostAnnotation after it was written
// (SwitchLossAcknowledged): a switch removed on purpose. At the first pass it takes the losses a previous leader
// stated on the Nodes, with their time. Switches newly gone are logged and summed up in one Warning Event on the
// leader-election Lease (each node's own Event comes with its health finding, noteFindings); the gauge of nodes
// with lost switches follows.
func (h *healthStage) noteLostSwitches(ctx context.Context, inputs []topology.SourceInput, tree *topology.Tree, nodes map[string]*metav1.PartialObjectMetadata) {
	s := &h.switchLoss
	ins := make([]topology.Input, 0, len(inputs))
	for _, in := range inputs {
		ins = append(ins, in.Input)
	}
	prev := s.recall
	cur := health.RecallSwitches(prev, ins, tree)
	s.recall = cur
	if !s.loaded {
		s.loaded = true
		s.lost = h.annotatedSwitchLosses(nodes)
	}
	vanished := prev.Vanished(cur)
	if len(s.lost) == 0 && len(vanished) == 0 {
		h.r.Metrics.nodesWithLostSwitches.Set(0)
		return // the usual pass
	}
	now := h.r.now()
	placed := health.NodeLeaves(tree)
	next := make(map[string]lostSwitch, len(s.lost))
	for _, n := range slices.Sorted(maps.Keys(s.lost)) {
		if l, keep := h.lossStays(n, s.lost[n], cur, placed, nodes); keep {
			next[n] = l
		}
	}
	var fresh []health.LostSwitch
	for _, l := range health.DetectLostSwitches(prev, cur, placed, now) {
		had, ok := next[l.Node]
		if !ok {
			next[l.Node] = lostSwitch{LostSwitch: l}
			fresh = append(fresh, l)
			continue
		}
		byID := map[string]health.GoneSwitch{}
		for _, g := range append(had.Switches, l.Switches...) {
			byID[g.ID] = g
		}
		had.Switches = nil
		for _, id := range slices.Sorted(maps.Keys(byID)) {
			had.Switches = append(had.Switches, byID[id])
		}
		next[l.Node] = had // its first loss's time stays
		fresh = append(fresh, l)
	}
	s.lost = next
	h.r.Metrics.nodesWithLostSwitches.Set(float64(len(next)))
	if len(vanished) > 0 {
		h.sayVanished(ctx, vanished, fresh)
	}
}

// lossStays judges one node's known loss at this pass: it ends when the node is no longer placed, when an admin
// removed its annotation after the Node was seen carrying it, or when all its switches are back in the tree
// (cur); else it keeps the switches still gone.
func (h *healthStage) lossStays(n string, l lostSwitch, cur *health.SwitchRecall, placed map[string]string,
	nodes map[string]*metav1.PartialObjectMetadata) (lostSwitch, bool) {
	if _, ok := placed[n]; !ok {
		h.r.Log.Info("node that had lost switches is no longer followed: the tree no longer places it", "node", n, "switches", l.SwitchIDs())
		return l, false
	}
	if node, ok := nodes[n]; ok {
		if _, has := node.Annotations[wellknown.SwitchLostAnnotation]; has {
			l.shown = true
		} else if l.shown {
			h.r.Log.Info("lost switches acknowledged: the node's annotation was removed", "node", n, "switches", l.SwitchIDs(), "annotation", wellknown.SwitchLostAnnotation)
			h.r.nodeEvent(n, nodes, corev1.EventTypeNormal, pipeline.ReasonSwitchLossAcknowledged,
				"annotation %s removed: the loss of %s is acknowledged and no longer reported", wellknown.SwitchLostAnnotation, goneNames(l.Switches))
			return l, false
		}
	}
	still := slices.DeleteFunc(slices.Clone(l.Switches), func(g health.GoneSwitch) bool { return cur.Has(g.ID) })
	if len(still) == len(l.Switches) {
		return l, true
	}
	back := slices.DeleteFunc(slices.Clone(l.Switches), func(g health.GoneSwitch) bool { return !cur.Has(g.ID) })
	h.r.Log.Info("switches a node had lost are back in the tree", "node", n, "back", goneNames(back), "stillLost", len(still))
	if len(still) == 0 {
		h.r.nodeEvent(n, nodes, corev1.EventTypeNormal, pipeline.ReasonSwitchRestored,
			"%s back in the tree; the node had lost %s since %s", goneNames(back), wording.Plural(len(back), "it", "them"), l.Since.UTC().Format(time.RFC3339))
		return l, false
	}
	l.Switches = still
	return l, true
}

// annotatedSwitchLosses are the losses a previous leader stated on the Nodes (SwitchLostAnnotation), each
// shown; a value it cannot read is logged and ignored.
func (h *healthStage) annotatedSwitchLosses(nodes map[string]*metav1.PartialObjectMetadata) map[string]lostSwitch {
	out := map[string]lostSwitch{}
	for n, node := range nodes {
		v, ok := node.Annotations[wellknown.SwitchLostAnnotation]
		if !ok {
			continue
		}
		l, err := pipeline.ParseSwitchLost(n, v)
		if err != nil {
			h.r.Log.Warn("node annotation ignored", "node", n, "err", err)
			continue
		}
		out[n] = lostSwitch{LostSwitch: l, shown: true}
	}
	return out
}

// lostSwitchList returns the nodes that lost switches, sorted by node, for fabric health.
func (h *healthStage) lostSwitchList() []health.LostSwitch {
	out := make([]health.LostSwitch, 0, len(h.switchLoss.lost))
	for _, n := range slices.Sorted(maps.Keys(h.switchLoss.lost)) {
		out = append(out, h.switchLoss.lost[n].LostSwitch)
	}
	return out
}

// withSwitchLost returns the SwitchLostAnnotation value wanted on each node that lost switches and has a Node
// (node → value), and lists in desired (node → labels fabricmap wants) every node whose annotation is to be
// written or removed, with the labels fabricmap owns on it as they are when the pass wants none there.
func (h *healthStage) withSwitchLost(desired map[string]map[string]string, nodes map[string]*metav1.PartialObjectMetadata, keys []string) map[string]string {
	out := make(map[string]string, len(h.switchLoss.lost))
	for n, l := range h.switchLoss.lost {
		if node, ok := nodes[n]; ok {
			out[n] = pipeline.SwitchLostValue(l.LostSwitch)
			if _, listed := desired[n]; !listed {
				desired[n] = ownedAsIs(node, keys)
			}
		}
	}
	for n, node := range nodes {
		if _, lost := out[n]; lost || !annotationDiffers(node, wellknown.SwitchLostAnnotation, "") {
			continue
		}
		if _, listed := desired[n]; !listed {
			desired[n] = ownedAsIs(node, keys)
		}
	}
	return out
}

// sayVanished logs the switches gone from the tree this pass and the nodes they leave short, and records one
// Warning Event on the leader-election Lease that names the switches and counts the nodes, naming the first.
// Switches gone with no node left short (their nodes left the tree with them) are logged only.
func (h *healthStage) sayVanished(ctx context.Context, vanished []health.GoneSwitch, fresh []health.LostSwitch) {
	names := make([]string, 0, len(fresh))
	for _, l := range fresh {
		names = append(names, l.Node)
	}
	if len(fresh) == 0 {
		h.r.Log.Info("switches gone from the tree; no node still placed had them", "switches", goneNames(vanished))
		return
	}
	h.r.Log.Warn("switches gone from the tree while nodes they served stay placed: those nodes lost them",
		"switches", goneNames(vanished), "nodes", len(fresh), "first", head(names, 20))
	h.r.fabricEvent(ctx, corev1.EventTypeWarning, pipeline.ReasonSwitchesVanished,
		"%s gone from the tree; %d %s that had %s stay placed and lost %s: %s. `fabricmap get health` lists them; remove a node's %s annotation to acknowledge a switch removed on purpose",
		goneNames(vanished), len(fresh), wording.Plural(len(fresh), "node", "nodes"), wording.Plural(len(vanished), "it", "them"), wording.Plural(len(vanished), "it", "them"),
		wording.Head(names, 10), wellknown.SwitchLostAnnotation)
}

// goneNames names switches for people, "switch X" or "switches X, Y", the first 10 of them.
func goneNames(gs []health.GoneSwitch) string {
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		parts = append(parts, g.String())
	}
	return wording.Plural(len(gs), "switch ", "switches ") + wording.Head(parts, 10)
}
