package aggregator

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonSourceAwaited (Warning) is recorded on the leader Lease when the aggregator writes nothing because a
// source has given no good evidence since it started.
const ReasonSourceAwaited = "SourceAwaited"

// holdForSources tells whether the pass must write nothing because of awaited, the sources that have given no
// good evidence since this aggregator started (a UFM that fails at start-up, a capture file not mounted yet),
// while owned (the owned HyperNodes there are) is not zero. The HyperNodes written before the restart hold the
// last good view of those sources: a tree built without them would delete or flatten what only they know (the
// spines UFM gives), and the deletion guard lets a few such deletions go. So the last tree stays as written
// until every source answered once, and the log, fabricmap_aggregator_source_awaited and an Event on the Lease
// say so; nodes that joined meanwhile are placed then. With no HyperNodes yet (a first install) there is nothing
// to keep, and the tree is written from what answered.
func (gs *guardStage) holdForSources(ctx context.Context, awaited []string, owned int) bool {
	held := len(awaited) > 0 && owned > 0
	for _, p := range gs.r.stagePoll().sourceList() {
		v := 0.0
		if held && slices.Contains(awaited, p.src.Name()) {
			v = 1
		}
		gs.r.Metrics.sourceAwaited.WithLabelValues(p.src.Name()).Set(v)
	}
	said := ""
	if held {
		said = strings.Join(awaited, ",")
	}
	if said == gs.awaitedSaid {
		return held
	}
	gs.awaitedSaid = said
	if !held {
		gs.r.Log.Info("every source has answered since the start; writing the tree")
		return false
	}
	gs.r.Log.Warn("nothing written: sources have given no good evidence since the aggregator started; the HyperNodes written before stay as they are until they answer",
		"sources", awaited, "hyperNodes", owned)
	gs.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonSourceAwaited,
		"nothing written: source(s) %s gave no good evidence since the aggregator started; the %d HyperNodes written before stay until they answer (see the aggregator's log for their errors)",
		said, owned)
	return true
}
