package aggregator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// expiryBed is a reconciler on the real API server whose reports expire after expiry (0: never) and whose
// domains go after grace, with a settable clock, and one Node and report behind switch sw for each of nodes.
func expiryBed(t *testing.T, expiry, grace time.Duration, sw string, nodes ...string) (*Reconciler, *fakeClock) {
	t.Helper()
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, grace, clock)
	r.Config.ReportExpiry = expiry
	r.Heartbeats = &Heartbeats{Now: clock.now}
	for _, n := range nodes {
		createNode(t, n)
		upsertReport(t, report(n, sw))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			deleteNodeNamed(t, n)
		}
	})
	return r, clock
}

// An agent that dies leaves its report behind. The report stays in use until the agent's heartbeat has been
// silent for the expiry, and then for the grace period more, with a Warning Event at each step; then the
// node leaves the tree (its leaf shrinks, its labels go). An agent that renews again brings it back. A node
// whose agent has no heartbeat at all never expires.
func TestSilentAgentExpiresThenShrinksItsDomain(t *testing.T) {
	testenv.Require(t)
	r, clock := expiryBed(t, 5*time.Minute, 10*time.Minute, "01", "exp-n1", "exp-n2", "exp-n3")
	var events eventLog
	r.Events = &events
	r.Heartbeats.Observe("exp-n1", "1")
	r.Heartbeats.Observe("exp-n2", "1") // exp-n3's agent runs with the heartbeat off
	block := hypernodegen.DefaultTierKeys[0]
	all := map[string][]string{"fabric": {"sw-01"}, "sw-01": {"exp-n1", "exp-n2", "exp-n3"}}

	if d := reconcileOnce(t, r); d <= 0 || d > 5*time.Minute+time.Second {
		t.Errorf("requeue after %v, want the first expiry (5 min)", d)
	}
	if diff := cmp.Diff(all, hyperNodes(t)); diff != "" {
		t.Fatalf("HyperNodes (-want +got):\n%s", diff)
	}

	// exp-n2 keeps renewing; exp-n1 has gone silent.
	clock.t = clock.t.Add(4 * time.Minute)
	r.Heartbeats.Observe("exp-n2", "2")
	clock.t = clock.t.Add(2 * time.Minute)
	before := writes(r)
	if d := reconcileOnce(t, r); d <= 0 || d > 3*time.Minute+time.Second {
		t.Errorf("requeue after %v, want exp-n2's expiry in 3 min", d)
	}
	if diff := cmp.Diff(all, hyperNodes(t)); diff != "" || writes(r) != before {
		t.Fatalf("an expired report must stay in use for the grace period: %v writes, HyperNodes (-want +got):\n%s", writes(r)-before, diff)
	}
	if g := gaugeValue(t, r.Metrics.expiredReports.WithLabelValues("kept")); g != 1 {
		t.Errorf("expired reports kept = %v, want 1", g)
	}

	for range 3 { // exp-n2 renews every 4 min; exp-n1 stays silent past the 5 + 10 min
		clock.t = clock.t.Add(4 * time.Minute)
		r.Heartbeats.Observe("exp-n2", clock.t.String())
		reconcileOnce(t, r)
	}
	want := map[string][]string{"fabric": {"sw-01"}, "sw-01": {"exp-n2", "exp-n3"}}
	if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
		t.Fatalf("after expiry and grace (-want +got):\n%s", diff)
	}
	if got := fabricLabels(t, "exp-n1"); len(got) != 0 {
		t.Errorf("the dropped node keeps fabricmap's labels %v", got)
	}
	if got := fabricLabels(t, "exp-n3")[block]; got != "sw-01" {
		t.Errorf("exp-n3 (no heartbeat) lost its place: %s=%q", block, got)
	}
	if g := gaugeValue(t, r.Metrics.expiredReports.WithLabelValues("dropped")); g != 1 {
		t.Errorf("expired reports dropped = %v, want 1", g)
	}

	// exp-n1's agent is back.
	r.Heartbeats.Observe("exp-n1", "2")
	reconcileOnce(t, r)
	if diff := cmp.Diff(all, hyperNodes(t)); diff != "" {
		t.Fatalf("after the heartbeat resumed (-want +got):\n%s", diff)
	}
	if got := fabricLabels(t, "exp-n1")[block]; got != "sw-01" {
		t.Errorf("exp-n1's label after it came back: %q", got)
	}
	var reasons []string
	for _, e := range events {
		if strings.HasPrefix(e, "Node/exp-n1 ") {
			reasons = append(reasons, strings.Fields(e)[2])
		} else {
			t.Errorf("unexpected event %s", e)
		}
	}
	if diff := cmp.Diff([]string{"ReportExpired:", "ReportDropped:", "HeartbeatResumed:"}, reasons); diff != "" {
		t.Errorf("events on exp-n1 (-want +got):\n%s\n%s", diff, strings.Join(events, "\n"))
	}
}

// With expiry off (the default of old configurations: --report-expiry=0) a silent agent's report stays.
func TestNoExpiryKeepsSilentReports(t *testing.T) {
	testenv.Require(t)
	r, clock := expiryBed(t, 0, time.Minute, "02", "noexp-n1")
	r.Heartbeats.Observe("noexp-n1", "1")
	reconcileOnce(t, r)
	clock.t = clock.t.Add(24 * time.Hour)
	if d := reconcileOnce(t, r); d != 0 {
		t.Errorf("requeue after %v with nothing pending", d)
	}
	if diff := cmp.Diff([]string{"noexp-n1"}, hyperNodes(t)["sw-02"]); diff != "" {
		t.Errorf("sw-02 (-want +got):\n%s", diff)
	}
}

func TestLeaseHandlerWakesOnlyForReturningAgents(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	h := &Heartbeats{Now: clock.now}
	handler := h.LeaseHandler(time.Minute)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	lease := func(name, holder, rv string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	}
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		advance time.Duration
		lease   *coordinationv1.Lease
		create  bool
		wantLen int
	}{
		{"first sight wakes nobody", 0, lease(v1alpha1.HeartbeatLeaseName("n1"), "n1", "1"), true, 0},
		{"a renewal in time wakes nobody", 30 * time.Second, lease(v1alpha1.HeartbeatLeaseName("n1"), "n1", "2"), false, 0},
		{"a resync (same version) changes nothing", 50 * time.Second, lease(v1alpha1.HeartbeatLeaseName("n1"), "n1", "2"), false, 0},
		{"a renewal after the expiry wakes the reconciler", 30 * time.Second, lease(v1alpha1.HeartbeatLeaseName("n1"), "n1", "3"), false, 1},
		{"a Lease named for another node is ignored", 5 * time.Minute, lease(v1alpha1.HeartbeatLeaseName("n2"), "n1", "4"), false, 1},
	} {
		clock.t = clock.t.Add(tc.advance)
		if tc.create {
			handler.Create(ctx, event.CreateEvent{Object: tc.lease}, q)
		} else {
			handler.Update(ctx, event.UpdateEvent{ObjectOld: tc.lease, ObjectNew: tc.lease}, q)
		}
		if q.Len() != tc.wantLen {
			t.Errorf("%s: %d requests queued, want %d", tc.name, q.Len(), tc.wantLen)
		}
	}
	if d, ok := h.Silence("n1"); !ok || d != 5*time.Minute {
		t.Errorf("n1 silent for %v (%v), want 5m: the foreign-named Lease must not count as its renewal", d, ok)
	}
}

// When most agents fall silent together, the API server was out of reach, not the agents: no report expires,
// however long it lasts, until they renew. An agent still silent then gets a whole expiry and grace period
// from that moment, and then leaves as usual.
func TestMassSilenceSuspendsExpiry(t *testing.T) {
	testenv.Require(t)
	nodes := []string{"mass-n1", "mass-n2", "mass-n3"}
	r, clock := expiryBed(t, time.Minute, time.Minute, "03", nodes...)
	for _, n := range nodes {
		r.Heartbeats.Observe(n, "1")
	}
	all := map[string][]string{"fabric": {"sw-03"}, "sw-03": nodes}
	reconcileOnce(t, r)

	clock.t = clock.t.Add(time.Hour) // an hour-long outage: nobody renewed
	reconcileOnce(t, r)
	if diff := cmp.Diff(all, hyperNodes(t)); diff != "" {
		t.Fatalf("all agents silent together dropped nodes (-want +got):\n%s", diff)
	}
	if g := gaugeValue(t, r.Metrics.expirySuspended); g != 1 {
		t.Errorf("report_expiry_suspended = %v, want 1", g)
	}

	r.Heartbeats.Observe("mass-n1", "2") // the API server is back; two agents renew, mass-n3 stays dead
	r.Heartbeats.Observe("mass-n2", "2")
	reconcileOnce(t, r)
	if g := gaugeValue(t, r.Metrics.expirySuspended); g != 0 {
		t.Errorf("report_expiry_suspended = %v after the renewals, want 0", g)
	}
	for i, tc := range []struct {
		advance time.Duration
		want    []string
	}{
		{30 * time.Second, nodes},                     // 30 s after the outage: mass-n3 is not judged on the hour before
		{45 * time.Second, nodes},                     // 75 s: expired, still used for the grace period
		{time.Minute, []string{"mass-n1", "mass-n2"}}, // 135 s: past expiry and grace
	} {
		clock.t = clock.t.Add(tc.advance)
		r.Heartbeats.Observe("mass-n1", fmt.Sprint(i+3))
		r.Heartbeats.Observe("mass-n2", fmt.Sprint(i+3))
		reconcileOnce(t, r)
		if diff := cmp.Diff(tc.want, hyperNodes(t)["sw-03"]); diff != "" {
			t.Errorf("step %d: sw-03 (-want +got):\n%s", i, diff)
		}
	}
}

// A Lease left by a node that has no report any more (deleted, its Lease not yet collected) does not count
// towards mass silence: one dead agent among two live nodes' agents still expires.
func TestLeasesWithoutReportsDoNotSuspendExpiry(t *testing.T) {
	testenv.Require(t)
	r, clock := expiryBed(t, time.Minute, time.Minute, "04", "gone-n1", "gone-n2")
	for _, n := range []string{"gone-n1", "gone-n2", "deleted-a", "deleted-b"} {
		r.Heartbeats.Observe(n, "1") // deleted-a and -b: Leases of nodes without a report
	}
	reconcileOnce(t, r)
	clock.t = clock.t.Add(45 * time.Second)
	r.Heartbeats.Observe("gone-n2", "2")
	reconcileOnce(t, r) // gone-n1 and both leftovers silent for 45 s: 3 of 4 Leases, but 1 of 2 reports
	if g := gaugeValue(t, r.Metrics.expirySuspended); g != 0 {
		t.Fatalf("report_expiry_suspended = %v: Leases without a report were counted", g)
	}
	clock.t = clock.t.Add(30 * time.Second)
	r.Heartbeats.Observe("gone-n2", "3")
	reconcileOnce(t, r)
	if g := gaugeValue(t, r.Metrics.expiredReports.WithLabelValues("kept")); g != 1 {
		t.Errorf("expired reports kept = %v, want gone-n1's", g)
	}
}
