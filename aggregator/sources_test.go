package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// threetierUFM serves the threetier fixture as UFM on 127.0.0.1 (broken says how it fails, see ufmServer) and
// returns the client's settings for it, the credentials in files as the chart mounts them.
func threetierUFM(t *testing.T, broken *atomic.Value) ufm.Config {
	t.Helper()
	dir := t.TempDir()
	for f, v := range map[string]string{"user": "admin", "pass": "s3cret"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := ufmServer(t, filepath.Join(testenv.RepoRoot(), "sources/ufm/testdata/threetier"), broken)
	return ufm.Config{BaseURL: srv.URL, UsernameFile: filepath.Join(dir, "user"), PasswordFile: filepath.Join(dir, "pass")}
}

// ufmServer serves the sources/ufm fixture dir under /ufmRest/resources/ with basic auth, or, while broken
// holds a mode, answers 500s ("500"), truncated JSON ("garbage") or 503s asking to come back in five minutes
// ("busy", as UFM under load does).
func ufmServer(t *testing.T, dir string, broken *atomic.Value) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch broken.Load() {
		case "500":
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		case "garbage":
			_, _ = w.Write([]byte(`[{"system_guid": "0x`))
			return
		case "busy":
			w.Header().Set("Retry-After", "300")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		name := strings.TrimPrefix(req.URL.Path, "/ufmRest/resources/") + ".json"
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestUFMSourceBuildsTiersAndSurvivesOutages reads a 3-tier fabric from a UFM on 127.0.0.1: the HyperNodes
// get the core tier; 500s and then garbage keep the last good fabric (nothing deleted, the source stale); UFM
// answering again clears the stale mark.
func TestUFMSourceBuildsTiersAndSurvivesOutages(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	var broken atomic.Value
	broken.Store("")
	conf := threetierUFM(t, &broken)
	conf.MaxRetries, conf.RetryWaitMin, conf.RetryWaitMax = 1, time.Millisecond, 10*time.Millisecond
	c, err := ufm.NewClient(conf)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: &ufm.Source{Client: c}, Interval: 5 * time.Minute}}

	if requeue := reconcileOnce(t, r); requeue <= 0 || requeue > 5*time.Minute {
		t.Errorf("requeue after %v, want the next UFM poll within 5m", requeue)
	}
	want := hyperNodeTiers(t)
	if len(want) == 0 || maxTier(want) < 3 {
		t.Fatalf("UFM's 3-tier fabric gave HyperNodes %v, want tiers up to at least 3", want)
	}
	stale := func() float64 { return gaugeValue(t, r.Metrics.sourceStale.WithLabelValues(ufm.Name)) }
	for _, mode := range []string{"500", "garbage", ""} {
		broken.Store(mode)
		clock.t = clock.t.Add(6 * time.Minute)
		reconcileOnce(t, r) // the poll begins, beside the rebuild
		settleSources(t, r)
		clock.t = clock.t.Add(2 * time.Minute) // past the grace period: a domain missing now would be deleted
		reconcileOnce(t, r)
		if got := hyperNodeTiers(t); !equalTiers(got, want) {
			t.Errorf("UFM answering %q changed the HyperNodes: %v, want %v", mode, got, want)
		}
		if wantStale := map[string]float64{"500": 1, "garbage": 1, "": 0}[mode]; stale() != wantStale {
			t.Errorf("UFM answering %q: stale = %v, want %v", mode, stale(), wantStale)
		}
	}
}

// staticSource is a sources.Source with fixed evidence, standing in for a second fabric-wide source; it merges
// by merge, topology.Merge when nil.
type staticSource struct {
	name  string
	in    topology.Input
	merge func(merged, in topology.Input) (topology.Input, []topology.Conflict)
}

func (s *staticSource) Name() string                                     { return s.name }
func (s *staticSource) Evidence(context.Context) (topology.Input, error) { return s.in, nil }
func (s *staticSource) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	if s.merge != nil {
		return s.merge(merged, in)
	}
	return topology.Merge(merged, in)
}

// TestConflictingSourcesRecordAnEventAndPriorityWins places one node behind different switches in two sources:
// the higher-priority one wins whatever the order given, the conflict is counted and an Event is recorded on
// the Node in the real API server.
func TestConflictingSourcesRecordAnEventAndPriorityWins(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := createNode(t, "conflict-n1")
	upsertReport(t, report("conflict-n1", "41"))
	other := &staticSource{name: labels.Name, merge: labels.MergeBelow, in: topology.Input{Nodes: []topology.NodeEvidence{{
		Node: "conflict-n1", Source: labels.Name, Links: []topology.SwitchLink{{SwitchID: "mac:02:00:00:00:00:99", SwitchName: "sw-99"}}}}}}

	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()

	for _, priority := range [][]string{nil, {"labels", pipeline.SourceReports}} {
		clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		r := newReconciler(t, time.Minute, clock)
		r.Sources = []sources.Spec{{Source: other}}
		r.Config.SourcePriority = priority
		r.Events = broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")
		reconcileOnce(t, r)
		winner, loser := pipeline.SourceReports, "labels"
		if priority != nil {
			winner, loser = "labels", pipeline.SourceReports
		}
		if got := counterValue(r.Metrics.conflicts.WithLabelValues(winner, loser)); got != 1 {
			t.Errorf("priority %v: conflicts(kept %s, dropped %s) = %v, want 1", priority, winner, loser, got)
		}
		wantLeaf := map[string]string{pipeline.SourceReports: "sw-41", "labels": "sw-99"}[winner]
		if _, ok := hyperNodeTiers(t)[wantLeaf]; !ok {
			t.Errorf("priority %v: no HyperNode %s from the winning source %s: %v", priority, wantLeaf, winner, hyperNodeTiers(t))
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list eventsv1.EventList
		if err := testenv.Shared.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range list.Items {
			if e.Reason == "SourceConflict" && e.Regarding.Name == node.Name && e.Regarding.UID == node.UID && strings.Contains(e.Note, "labels") {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SourceConflict Event on node %s; events: %+v", node.Name, list.Items)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hyperNodeTiers returns name -> tier of every HyperNode.
func hyperNodeTiers(t *testing.T) map[string]int {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, hn := range list.Items {
		out[hn.Name] = hn.Spec.Tier
	}
	return out
}

func maxTier(m map[string]int) int {
	top := 0
	for _, v := range m {
		top = max(top, v)
	}
	return top
}

func equalTiers(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// settleSources waits until no poll of r's sources is in flight, so that the next reconcile takes in their
// outcomes.
func settleSources(t *testing.T, r *Reconciler) {
	t.Helper()
	for _, p := range r.polls.polled {
		p.mu.Lock()
		running := p.running
		p.mu.Unlock()
		if running == nil {
			continue
		}
		select {
		case <-running:
		case <-time.After(time.Minute):
			t.Fatalf("the poll of %s did not end within a minute", p.src.Name())
		}
	}
}

// gatedSource is a sources.Source whose polls each wait for a value on answers (or their deadline), to show what
// the reconcile does while a poll is in flight.
type gatedSource struct {
	answers chan topology.Input
	polls   atomic.Int32
	timeout time.Duration
}

func (s *gatedSource) Name() string { return "gated" }
func (s *gatedSource) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return topology.Merge(merged, in)
}
func (s *gatedSource) Evidence(ctx context.Context) (topology.Input, error) {
	s.polls.Add(1)
	select {
	case in := <-s.answers:
		if in.Nodes == nil {
			panic("a source that panics")
		}
		return in, nil
	case <-ctx.Done():
		return topology.Input{}, ctx.Err()
	}
}

// panicking marks an answer of gatedSource that makes its poll panic.
var panicking = topology.Input{}

// The reconcile waits for a source's first poll only; later polls run beside it: it keeps the last good
// evidence while one is in flight, takes in its outcome once it ended, and looks again soon. A poll that
// reaches its deadline or panics fails (counted), and the last good evidence stays.
func TestPolledSourceWaitsOnlyForTheFirstPoll(t *testing.T) {
	first := topology.Input{Nodes: []topology.NodeEvidence{{Node: "n1", Source: "gated"}}}
	second := topology.Input{Nodes: []topology.NodeEvidence{{Node: "n2", Source: "gated"}}}
	src := &gatedSource{answers: make(chan topology.Input, 1), timeout: 200 * time.Millisecond}
	r := &Reconciler{Metrics: NewMetrics(prometheus.NewRegistry()), Sources: []sources.Spec{{Source: src, Interval: time.Minute, PollTimeout: src.timeout}}}
	clock := time.Unix(1_800_000_000, 0)
	r.Now = func() time.Time { return clock }
	ctx := context.Background()
	p := r.stagePoll().sourceList()[0]
	type step struct {
		Nodes    []string
		Err      string
		InFlight bool
		Next     time.Duration
	}
	look := func() step {
		r.stagePoll().pollSources(ctx)
		in, err := p.evidence(ctx, clock)
		st := step{Next: p.nextPoll(clock)}
		for _, n := range in.Nodes {
			st.Nodes = append(st.Nodes, n.Node)
		}
		if err != nil {
			st.Err = err.Error()
		}
		p.mu.Lock()
		st.InFlight = p.running != nil
		p.mu.Unlock()
		return st
	}

	src.answers <- first
	var got, want []step
	got = append(got, look()) // the first poll, waited for
	want = append(want, step{Nodes: []string{"n1"}, Next: time.Minute})
	clock = clock.Add(time.Minute)
	got = append(got, look()) // the second poll begins; nothing waits for it
	want = append(want, step{Nodes: []string{"n1"}, InFlight: true, Next: minPickup})
	src.answers <- second
	settleSources(t, r)
	got = append(got, look()) // its outcome is taken in
	want = append(want, step{Nodes: []string{"n2"}, Next: time.Minute})
	clock = clock.Add(time.Minute)
	got = append(got, look()) // the third poll gets no answer: it reaches its deadline
	settleSources(t, r)
	got = append(got, look())
	want = append(want, step{Nodes: []string{"n2"}, InFlight: true, Next: minPickup},
		step{Nodes: []string{"n2"}, Err: "source gated: gave up at the poll deadline of 200ms: context deadline exceeded", Next: time.Minute})
	clock = clock.Add(time.Minute)
	src.answers <- panicking
	look()
	settleSources(t, r)
	got = append(got, look()) // a panic fails the poll, not the process
	want = append(want, step{Nodes: []string{"n2"}, Err: "source gated: the poll panicked: a source that panics", Next: time.Minute})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if n := src.polls.Load(); n != 4 {
		t.Errorf("%d polls, want 4", n)
	}
	if n := counterValue(r.Metrics.sourcePollTimeouts.WithLabelValues("gated")); n != 1 {
		t.Errorf("poll timeouts counted = %v, want 1", n)
	}
}

// shrinkHosts returns evidence of n nodes, host-01 … host-n, each behind one leaf.
func shrinkHosts(n int) topology.Input {
	var in topology.Input
	for i := 1; i <= n; i++ {
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("host-%02d", i), Source: "gated",
			Links: []topology.SwitchLink{{SwitchID: "guid:b83fd20300e20101", SwitchName: "ib-su1-leaf-r1"}}})
	}
	return in
}

// A poll that loses more than the shrink guard's share of a source's nodes keeps the last good evidence in
// use (the gauge counts the nodes held) until the same nodes have stayed missing for the confirmation period;
// a loss within the share, or a recovery, is taken in at once.
func TestPolledSourceHoldsAShrinkUntilConfirmed(t *testing.T) {
	src := &gatedSource{answers: make(chan topology.Input, 1), timeout: time.Minute}
	guard := sources.ShrinkGuard{MaxShare: 0.2, ConfirmAfter: 30 * time.Minute}
	r := &Reconciler{Metrics: NewMetrics(prometheus.NewRegistry()),
		Sources: []sources.Spec{{Source: src, Interval: time.Minute, PollTimeout: src.timeout, Shrink: guard}}}
	clock := time.Unix(1_800_000_000, 0)
	r.Now = func() time.Time { return clock }
	ctx := context.Background()
	p := r.stagePoll().sourceList()[0]
	type step struct {
		Nodes int
		Held  float64
		Err   string
	}
	// poll answers one poll with in, after after has passed, and says what the reconcile then uses.
	poll := func(after time.Duration, in topology.Input) step {
		clock = clock.Add(after)
		r.stagePoll().pollSources(ctx)
		src.answers <- in
		settleSources(t, r)
		got, err := p.evidence(ctx, clock)
		st := step{Nodes: len(got.Nodes), Held: gaugeValue(t, r.Metrics.sourceShrinkHeld.WithLabelValues("gated"))}
		if err != nil {
			st.Err = err.Error()
		}
		return st
	}
	got := []step{
		poll(0, shrinkHosts(10)),                         // the first poll
		poll(time.Minute, shrinkHosts(5)),                // 5 of 10 gone: held
		poll(time.Minute, shrinkHosts(5)),                // still held: 1m of 30m
		poll(29*time.Minute, shrinkHosts(5)),             // the same 5 missing for 30m: taken in
		poll(time.Minute, shrinkHosts(10)),               // growth: taken in at once
		poll(time.Minute, shrinkHosts(9)),                // 1 of 10 gone: within the share, taken in at once
		poll(time.Minute, shrinkHosts(4)),                // 5 of 9 gone: held
		poll(time.Minute, shrinkHosts(3)),                // other nodes gone: the period starts again
		poll(29*time.Minute+time.Second, shrinkHosts(3)), // 29m after the new loss: still held
		poll(time.Minute, shrinkHosts(9)),                // the nodes are back: the hold ends
	}
	want := []step{
		{Nodes: 10}, {Nodes: 10, Held: 5}, {Nodes: 10, Held: 5}, {Nodes: 5},
		{Nodes: 10}, {Nodes: 9},
		{Nodes: 9, Held: 5}, {Nodes: 9, Held: 6}, {Nodes: 9, Held: 6}, {Nodes: 9},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// The shrink guard's flags reach every source's Spec; a share outside 0 to 1 is refused.
func TestShrinkGuardFlags(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "fabric.txt")
	for _, tc := range []struct {
		args    []string
		want    sources.ShrinkGuard
		wantErr string
	}{
		{args: nil, want: sources.ShrinkGuard{MaxShare: 0.2, ConfirmAfter: 30 * time.Minute}},
		{args: []string{"--source-shrink-max-share=0.5", "--source-shrink-confirm-after=2h"}, want: sources.ShrinkGuard{MaxShare: 0.5, ConfirmAfter: 2 * time.Hour}},
		{args: []string{"--source-shrink-max-share=1.5"}, wantErr: "--source-shrink-max-share 1.5: want a share from 0 to 1"},
		{args: []string{"--source-shrink-confirm-after=-1m"}, wantErr: "--source-shrink-confirm-after -1m0s: want 0 or more"},
	} {
		var o sources.Options
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		o.AddPollFlags(fs)
		if err := fs.Parse(append([]string{"--capture-file=" + capture}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		specs, err := o.Specs(sources.Deps{Log: slog.New(slog.DiscardHandler)})
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%v: err = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(specs) != 1 {
			t.Fatalf("%v: specs %v, err %v", tc.args, specs, err)
		}
		if diff := cmp.Diff(tc.want, specs[0].Shrink); diff != "" {
			t.Errorf("%v: shrink guard (-want +got):\n%s", tc.args, diff)
		}
	}
}
