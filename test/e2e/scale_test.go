package e2e

import (
	"context"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestOutputsJudged checks the judge that stops the scale bench's clocks: the outputs the evidence gives pass,
// and each way of falling short of them (a HyperNode, a status or a label not yet written, the tree before the
// move) does not.
func TestOutputsJudged(t *testing.T) {
	const hosts = 4 * loadHostsPerSU
	keys, err := hypernodegen.StyleKeys(wellknown.LabelStyleTopographV1)
	if err != nil {
		t.Fatal(err)
	}
	systems, links := loadUFM(hosts / loadHostsPerSU)
	before, after := loadReports(hosts, nil), loadReports(hosts, loadMoves(hosts))
	// written is what the aggregator leaves once it has written the tree of reports: its HyperNodes with
	// their status, and its labels on every node.
	written := func(reports []*v1alpha1.NodeFabricReport) state {
		tree, evidence := loadTree(t, reports, systems, links)
		hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		owned := map[string]map[string]string{}
		for node, labels := range hypernodegen.DesiredNodeLabels(tree, evidence, keys) {
			owned[node] = maps.Clone(labels)
		}
		return state{hyperNodes: hns, owned: owned}
	}
	node := loadNode(5)
	for _, tc := range []struct {
		name   string
		judged []*v1alpha1.NodeFabricReport // the reports whose tree is expected
		state  func() state
		want   bool
	}{
		{name: "every output written", judged: before, state: func() state { return written(before) }, want: true},
		{name: "the outputs after the move", judged: after, state: func() state { return written(after) }, want: true},
		{name: "fabric health's label beside them", judged: before, want: true, state: func() state {
			s := written(before)
			s.owned[node][wellknown.LinkHealthLabel] = wellknown.LinkHealthDegraded
			return s
		}},
		{name: "the outputs before the move", judged: after, state: func() state { return written(before) }},
		{name: "a HyperNode not yet applied", judged: before, state: func() state {
			s := written(before)
			s.hyperNodes = s.hyperNodes[1:]
			return s
		}},
		{name: "a HyperNode's status not yet written", judged: before, state: func() state {
			s := written(before)
			s.hyperNodes[0].Status.NodeCount = 0
			return s
		}},
		{name: "a node not yet labelled", judged: before, state: func() state {
			s := written(before)
			delete(s.owned, node)
			return s
		}},
		{name: "a node's leaf label not yet rewritten", judged: before, state: func() state {
			s := written(before)
			s.owned[node][keys.Tiers[0]] = "an-old-leaf"
			return s
		}},
		{name: "a label the tree no longer gives", judged: before, state: func() state {
			s := written(before)
			s.owned[node][keys.Tiers[len(keys.Tiers)-1]] = "a-gone-tier"
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := expect(t, tc.judged, systems, links, keys)
			if got, why := e.matches(tc.state()); got != tc.want {
				t.Errorf("judged complete: %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

// fakeHeartbeats is an agent.HeartbeatClient that takes each renewal delay long.
type fakeHeartbeats struct{ delay time.Duration }

func (f fakeHeartbeats) ApplyHeartbeat(ctx context.Context, _, _ string, _ time.Time, _ time.Duration, _ *metav1.OwnerReference, _ string) error {
	select {
	case <-time.After(f.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f fakeHeartbeats) RenewHeartbeat(ctx context.Context, _, _ string, _ time.Time, _ string) error {
	return f.ApplyHeartbeat(ctx, "", "", time.Time{}, 0, nil, "")
}

func (f fakeHeartbeats) DeleteHeartbeat(context.Context, string, string) error { return nil }

// TestHeartbeatsKeepTheirRate checks that the heartbeat load renews at the agents' rate when the API server
// keeps up, and shows it when it does not: the achieved rate drops and renewals are counted late.
func TestHeartbeatsKeepTheirRate(t *testing.T) {
	const nodes = 100
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		behind bool
	}{
		{name: "renewals answered at once", delay: time.Millisecond},
		// Each agent renews every 0.5 s here: renewals that take 4 s leave most of them late.
		{name: "renewals slower than the rate", delay: 4 * time.Second, behind: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeartbeats(fakeHeartbeats{delay: tc.delay}, namespace, nodes*5*time.Millisecond, nodes)
			const d = 3 * time.Second
			h.start()
			time.Sleep(d)
			// Renewals still in flight when the time is up are not counted; with the slow client none ends.
			rate := heartbeatRate(0, h.sent.Load(), d)
			h.halt()
			behind := rate < 0.8*h.targetPerSecond() && h.late.Load() > 0
			if behind != tc.behind {
				t.Errorf("achieved %.0f/s of %.0f/s with %d late: behind %v, want %v", rate, h.targetPerSecond(), h.late.Load(), behind, tc.behind)
			}
		})
	}
}
