package aggregator

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/hypernodegen"
)

// TestHoldUnplacedLabels: the topology labels fabricmap owns on a node the tree does not place are kept for the
// hold, counted from when the node was first seen without a place or, for a lost uplink, from the loss; past it
// they are removed (an empty set wanted) with an Event; a hold of zero removes them at once; the deletion guard
// holding keeps them; placed nodes, dropped nodes and labels fabricmap does not own are not its business.
func TestHoldUnplacedLabels(t *testing.T) {
	tier0 := hypernodegen.DefaultTierKeys[0]
	keys := hypernodegen.DefaultLabelKeys().All()
	start := time.Unix(1_800_000_000, 0)
	nodes := map[string]*metav1.PartialObjectMetadata{
		"placed":   labelledNode("placed", map[string]string{tier0: "sw-1"}, tier0),
		"unplaced": labelledNode("unplaced", map[string]string{tier0: "sw-1"}, tier0),
		"lost":     labelledNode("lost", map[string]string{tier0: "sw-2"}, tier0),
		"dropped":  labelledNode("dropped", map[string]string{tier0: "sw-1"}, tier0),
		"admin":    labelledNode("admin", map[string]string{tier0: "rack-7"}),
		"bare":     labelledNode("bare", nil),
	}
	lost := map[string]health.LostUplink{"lost": {Node: "lost", Leaf: "sw-2", Since: start.Add(-4 * time.Minute)}}
	type pass struct {
		at          time.Duration // after start
		guardHolds  bool
		wantRemoved []string // nodes given an empty label set
		wantHeld    float64
		wantWait    time.Duration
		wantEvents  []string
	}
	for _, tc := range []struct {
		name   string
		hold   time.Duration
		passes []pass
	}{{
		name: "held for 5m: the lost uplink's hold runs from the loss, the other's from the first pass that saw it",
		hold: 5 * time.Minute,
		passes: []pass{
			{at: 0, wantHeld: 2, wantWait: time.Minute + 100*time.Millisecond},
			{at: time.Minute, wantRemoved: []string{"lost"}, wantHeld: 1, wantWait: 4*time.Minute + 100*time.Millisecond,
				wantEvents: []string{"Node/lost Warning TopologyLabelsRemoved"}},
			{at: 5 * time.Minute, wantRemoved: []string{"lost", "unplaced"},
				wantEvents: []string{"Node/lost Warning TopologyLabelsRemoved", "Node/unplaced Warning TopologyLabelsRemoved"}},
		},
	}, {
		name:   "a hold of zero removes them at once",
		passes: []pass{{at: 0, wantRemoved: []string{"lost", "unplaced"}, wantEvents: []string{"Node/lost Warning TopologyLabelsRemoved", "Node/unplaced Warning TopologyLabelsRemoved"}}},
	}, {
		name: "while the deletion guard holds, labels past the hold stay too",
		hold: time.Minute,
		passes: []pass{
			{at: 0, guardHolds: true, wantHeld: 2, wantWait: time.Minute + 100*time.Millisecond},
			{at: 2 * time.Minute, guardHolds: true, wantHeld: 2},
			{at: 3 * time.Minute, wantRemoved: []string{"lost", "unplaced"}, wantEvents: []string{"Node/lost Warning TopologyLabelsRemoved", "Node/unplaced Warning TopologyLabelsRemoved"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: start}
			var events eventLog
			r := &Reconciler{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(prometheus.NewRegistry()),
				Events: &events, Now: clock.now, Config: Config{UnplacedLabelHold: tc.hold}, health: healthStage{lostUplinks: lost}}
			for i, p := range tc.passes {
				clock.t = start.Add(p.at)
				r.guards.guard = guardState{}
				if p.guardHolds {
					r.guards.guard.held = map[string]bool{"sw-9": true}
				}
				events = nil
				desired := map[string]map[string]string{"placed": {tier0: "sw-1"}, "dropped": {}}
				wait := r.stageGuard().holdUnplacedLabels(desired, map[string]bool{"placed": true}, []string{"dropped"}, nodes, keys)
				want := map[string]map[string]string{"placed": {tier0: "sw-1"}, "dropped": {}}
				for _, n := range p.wantRemoved {
					want[n] = map[string]string{}
				}
				if diff := cmp.Diff(want, desired); diff != "" {
					t.Errorf("pass %d: desired labels (-want +got):\n%s", i, diff)
				}
				if got := gaugeValue(t, r.Metrics.labelsHeld); got != p.wantHeld {
					t.Errorf("pass %d: labels held = %v, want %v", i, got, p.wantHeld)
				}
				if wait != p.wantWait {
					t.Errorf("pass %d: next look after %v, want %v", i, wait, p.wantWait)
				}
				var got []string
				for _, e := range events {
					head, _, _ := strings.Cut(e, ":")
					got = append(got, head)
				}
				if diff := cmp.Diff(p.wantEvents, got); diff != "" {
					t.Errorf("pass %d: Events (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
