package aggregator

import (
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonTopologyLabelsRemoved (Warning, on the Node) says that the topology labels fabricmap wrote on a node
// were removed: the node stayed without a place in the tree for Config.UnplacedLabelHold.
const ReasonTopologyLabelsRemoved = "TopologyLabelsRemoved"

// DefaultUnplacedLabelHold is how long a node without a place in the tree keeps its topology labels by default:
// as long as a HyperNode absent from the tree waits by default (--delete-grace-period), so that a node's
// labels and the leaf HyperNode it was in go about together.
const DefaultUnplacedLabelHold = 10 * time.Minute

// holdUnplacedLabels decides what becomes of the topology labels fabricmap owns (keys) on the Nodes the tree does
// not place this pass (not in placed) and that were not dropped for a silent agent (their labels go at once):
// they are kept while the node has been without a place for less than Config.UnplacedLabelHold, counted from
// when this reconciler first saw it so or, for a node that lost its uplinks, from when that was found (which a
// new leader reads back from UplinkLostAnnotation); past it they are removed (desired, node → labels fabricmap
// wants, gets an empty set for the node), with a log line and a Warning Event on the Node. While the deletion
// guard holds HyperNode deletions (too much of the tree gone at once) no label is removed either. It sets the
// gauges of the nodes whose labels are held and removed, and returns when the next hold ends (a moment past
// it); zero when none is held.
func (gs *guardStage) holdUnplacedLabels(desired map[string]map[string]string, placed map[string]bool, dropped []string,
	nodes map[string]*metav1.PartialObjectMetadata, keys []string) time.Duration {
	if gs.unplacedSince == nil {
		gs.unplacedSince = map[string]time.Time{}
	}
	gone := make(map[string]bool, len(dropped))
	for _, n := range dropped {
		gone[n] = true
	}
	now := gs.r.now()
	guardHolds := gs.guard.held != nil
	seen := map[string]bool{}
	held, waiting := 0, 0
	var wait time.Duration
	var removed []string
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		if placed[n] || gone[n] || len(ownedAsIs(nodes[n], keys)) == 0 {
			continue
		}
		seen[n] = true
		since, ok := gs.unplacedSince[n]
		if !ok {
			since = now
			gs.unplacedSince[n] = now
		}
		if l, lost := gs.r.health.lostUplinks[n]; lost && l.Since.Before(since) {
			since = l.Since
		}
		if left := gs.r.Config.UnplacedLabelHold - now.Sub(since); left > 0 {
			held++
			if wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		if guardHolds {
			held++
			waiting++
			continue
		}
		desired[n] = map[string]string{}
		removed = append(removed, n)
		gs.r.nodeEvent(n, nodes, corev1.EventTypeWarning, ReasonTopologyLabelsRemoved,
			"the node has had no place in the topology since %s (hold %s): the topology labels fabricmap wrote on it are removed until it is placed again",
			since.UTC().Format(time.RFC3339), gs.r.Config.UnplacedLabelHold)
	}
	for n := range gs.unplacedSince {
		if !seen[n] {
			delete(gs.unplacedSince, n)
		}
	}
	gs.r.Metrics.labelsHeld.Set(float64(held))
	gs.r.Metrics.labelsReleased.Add(float64(len(removed)))
	if len(removed) > 0 {
		gs.r.Log.Warn("topology labels removed from nodes without a place in the tree past the hold", "count", len(removed),
			"nodes", head(removed, 20), "hold", gs.r.Config.UnplacedLabelHold)
	}
	if waiting > 0 {
		gs.r.Log.Info("topology labels of nodes without a place kept past the hold: the deletion guard holds HyperNode deletions", "nodes", waiting)
	}
	if wait > 0 {
		wait += 100 * time.Millisecond // a moment past the end, so that the pass then sees it over
	}
	return wait
}
