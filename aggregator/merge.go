package aggregator

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// EventRecorder is the part of an events.k8s.io recorder the aggregator uses.
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// mergeSources infers the tree from the reports' evidence, their cloud sections' (cloud) and every fabric-wide
// source's last good evidence
// (Infer: the one inference `fabricmap topology` shares), and keeps the polling's side: a source's errors,
// staleness and last success in the metrics, and every node two sources place behind different switches
// counted, logged and recorded as an Event on the Node. It returns the tree, the evidence it could not use,
// when the next source poll is due (0 when there is no source), and the sources that have given no good
// evidence since the aggregator started (sourcehold.go).
func (is *inferStage) mergeSources(ctx context.Context, reports, cloud topology.Input, nodes map[string]*metav1.PartialObjectMetadata) (*topology.Tree, []topology.Problem, time.Duration, []string) {
	inputs := []topology.SourceInput{{Name: pipeline.SourceReports, Input: reports, Merge: topology.Merge}}
	if len(cloud.Nodes) > 0 { // the nodes' own instance metadata (pipeline.CloudEvidence)
		inputs = append(inputs, topology.SourceInput{Name: pipeline.SourceCloud, Input: cloud, Merge: labels.MergeBelow})
	}
	now := is.r.now()
	var next time.Duration
	var awaited []string
	for _, p := range is.r.stagePoll().sourceList() {
		in, err := p.evidence(ctx, now)
		name := p.src.Name()
		stale := 0.0
		polledNow := p.attempt.Equal(now)
		if err != nil {
			stale = 1
			if polledNow {
				is.r.Metrics.sourceErrors.WithLabelValues(name).Inc()
				is.r.Log.Error("source unusable; its last good evidence stays in use", "source", name, "haveLastGood", p.good, "err", err)
			}
		} else if polledNow {
			is.r.Metrics.sourceLastSuccess.WithLabelValues(name).Set(float64(p.attempt.Unix()))
		}
		if polledNow {
			is.r.stagePoll().notePartialCapture(ctx, p, err)
		}
		is.r.Metrics.sourceStale.WithLabelValues(name).Set(stale)
		if d := p.nextPoll(now); next == 0 || d < next {
			next = d
		}
		if p.good {
			inputs = append(inputs, topology.SourceInput{Name: name, Input: in, Merge: p.src.Merge})
			is.r.stagePoll().noteHosts(ctx, p, nodes)
		} else {
			awaited = append(awaited, name)
		}
	}
	tree, problems, conflicts := pipeline.Infer(inputs, is.r.Config.Inference)
	is.r.stageHealth().noteLostSwitches(ctx, inputs, tree, nodes) // the switches placed nodes lost since the last pass (lostswitches.go)
	for _, c := range conflicts {
		is.conflict(c, nodes)
	}
	return tree, problems, next, awaited
}

// conflict reports two sources that disagree about a node's switches.
func (is *inferStage) conflict(c topology.Conflict, nodes map[string]*metav1.PartialObjectMetadata) {
	is.r.Metrics.conflicts.WithLabelValues(c.Kept, c.Dropped).Inc()
	is.r.Snapshot.RecordConflict(c)
	is.r.Log.Warn("sources disagree about a node's switches; the higher-priority source wins",
		"node", c.Node, "kept", c.Kept, "dropped", c.Dropped)
	n, ok := nodes[c.Node]
	if is.r.Events == nil || !ok {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: c.Node, UID: n.UID}
	is.r.Events.Eventf(ref, nil, corev1.EventTypeWarning, "SourceConflict", "MergeTopology",
		"sources %s and %s place this node behind different switches; %s wins (higher priority)", c.Kept, c.Dropped, c.Kept)
}
