package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func getLease(t *testing.T, node string) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	key := client.ObjectKey{Namespace: "default", Name: v1alpha1.HeartbeatLeaseName(node)}
	if err := testenv.Shared.Client.Get(context.Background(), key, &l); err != nil {
		t.Fatalf("reading the heartbeat Lease of %s: %v", node, err)
	}
	return &l
}

func TestHeartbeatRenewsItsLeaseEveryInterval(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "agent-heartbeat-1"}}
	if err := testenv.Shared.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:07")}}}
	a := newAgent(t, node.Name, &now, lldp)
	a.Config.Interval = 5 * time.Minute
	a.Heartbeat = &Heartbeat{Client: reportClient(t).(HeartbeatClient), Namespace: "default", Interval: time.Minute}

	cycle(t, a)
	l := getLease(t, node.Name)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != node.Name {
		t.Errorf("holder = %v, want %s", l.Spec.HolderIdentity, node.Name)
	}
	if l.Labels[v1alpha1.HeartbeatLabel] != v1alpha1.HeartbeatLabelValue {
		t.Errorf("labels = %v, want %s=%s", l.Labels, v1alpha1.HeartbeatLabel, v1alpha1.HeartbeatLabelValue)
	}
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 180 {
		t.Errorf("leaseDurationSeconds = %v, want 180 (three intervals)", l.Spec.LeaseDurationSeconds)
	}
	if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(now) {
		t.Errorf("renewTime = %v, want %v", l.Spec.RenewTime, now)
	}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != node.UID {
		t.Errorf("owner references = %+v, want the Node (so the Lease goes with it)", l.OwnerReferences)
	}
	rv := l.ResourceVersion

	now = now.Add(30 * time.Second)
	cycle(t, a)
	if got := getLease(t, node.Name).ResourceVersion; got != rv {
		t.Errorf("the Lease was renewed before its interval: resourceVersion %s → %s", rv, got)
	}
	now = now.Add(31 * time.Second)
	cycle(t, a)
	if got := getLease(t, node.Name).Spec.RenewTime; got == nil || !got.Time.Equal(now) {
		t.Errorf("after the interval, renewTime = %v, want %v", got, now)
	}
	if h, w := count(a.Metrics.heartbeats), count(a.Metrics.writes); h != 2 || w != 1 {
		t.Errorf("%v renewals and %v report writes, want 2 and 1 (the report is unchanged)", h, w)
	}
}

// failingHeartbeats refuses every renewal.
type failingHeartbeats struct{ calls int }

func (f *failingHeartbeats) ApplyHeartbeat(context.Context, string, string, time.Time, time.Duration, *metav1.OwnerReference, string) error {
	f.calls++
	return errors.New("connection refused")
}

func (f *failingHeartbeats) RenewHeartbeat(context.Context, string, string, time.Time, string) error {
	f.calls++
	return errors.New("connection refused")
}

func (f *failingHeartbeats) DeleteHeartbeat(context.Context, string, string) error {
	return errors.New("connection refused")
}

func TestHeartbeatFailureRetriesSoonAndKeepsTheCycle(t *testing.T) {
	testenv.Require(t)
	now := time.Unix(1_800_000_000, 0)
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:08")}}}
	a := newAgent(t, "agent-heartbeat-2", &now, lldp)
	f := &failingHeartbeats{}
	a.Heartbeat = &Heartbeat{Client: f, Namespace: "default", Interval: 10 * time.Minute}
	if !cycle(t, a) {
		t.Fatal("a failing heartbeat stopped the report")
	}
	now = now.Add(heartbeatRetry - time.Second)
	cycle(t, a)
	now = now.Add(time.Second)
	cycle(t, a)
	if f.calls != 2 || count(a.Metrics.heartbeatErrors) != 2 {
		t.Errorf("%d renewals tried, %v errors counted; want 2: at once, then after %v (not the 10 min interval)", f.calls, count(a.Metrics.heartbeatErrors), heartbeatRetry)
	}
}

func TestRunRenewsTheHeartbeatBetweenCycles(t *testing.T) {
	testenv.Require(t)
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:09")}}}
	var clock time.Time
	a := newAgent(t, "agent-heartbeat-3", &clock, lldp)
	a.Now = nil // the real clock: Run sleeps
	a.Config.Interval = time.Hour
	f := &countingHeartbeats{}
	a.Heartbeat = &Heartbeat{Client: f, Namespace: "default", Interval: 20 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if count(a.Metrics.writes) != 1 {
		t.Errorf("%v report writes in 300 ms with an hour's interval, want 1", count(a.Metrics.writes))
	}
	if f.calls < 3 {
		t.Errorf("%d renewals in 300 ms at a 20 ms heartbeat, want several between the hourly cycles", f.calls)
	}
}

// countingHeartbeats accepts every renewal and counts them.
type countingHeartbeats struct{ calls int }

func (f *countingHeartbeats) ApplyHeartbeat(context.Context, string, string, time.Time, time.Duration, *metav1.OwnerReference, string) error {
	f.calls++
	return nil
}

func (f *countingHeartbeats) RenewHeartbeat(context.Context, string, string, time.Time, string) error {
	f.calls++
	return nil
}

func (f *countingHeartbeats) DeleteHeartbeat(context.Context, string, string) error { return nil }

// An agent started with the heartbeat off deletes the Lease an earlier run left, once: a Lease that stops
// changing would make the aggregator drop a node whose agent is alive.
func TestHeartbeatOffDeletesTheOldLease(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "agent-heartbeat-off"}}
	if err := testenv.Shared.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:0b")}}}
	on := newAgent(t, node.Name, &now, lldp)
	on.Heartbeat = &Heartbeat{Client: reportClient(t).(HeartbeatClient), Namespace: "default", Interval: time.Minute}
	cycle(t, on)
	getLease(t, node.Name) // the earlier run's Lease exists

	off := newAgent(t, node.Name, &now, lldp)
	off.Heartbeat = &Heartbeat{Client: reportClient(t).(HeartbeatClient), Namespace: "default"}
	cycle(t, off)
	var l coordinationv1.Lease
	key := client.ObjectKey{Namespace: "default", Name: v1alpha1.HeartbeatLeaseName(node.Name)}
	if err := testenv.Shared.Client.Get(ctx, key, &l); !apierrors.IsNotFound(err) {
		t.Fatalf("the Lease after a run with the heartbeat off: %v, want it deleted", err)
	}
	cycle(t, off) // nothing left to delete: no error, no write
	if !off.Heartbeat.cleared || count(off.Metrics.heartbeats) != 0 {
		t.Errorf("cleared = %v, renewals = %v", off.Heartbeat.cleared, count(off.Metrics.heartbeats))
	}
}

func TestHeartbeatValidation(t *testing.T) {
	long := strings.Repeat("n", 250)
	for _, tc := range []struct {
		name, node, namespace string
		interval              time.Duration
		wantErr               string
	}{
		{name: "on", node: "gpu-1", namespace: "fabricmap-system", interval: time.Minute},
		{name: "off needs nothing", node: long, interval: 0},
		{name: "no namespace", node: "gpu-1", interval: time.Minute, wantErr: "namespace is empty"},
		{name: "node name too long for a Lease name", node: long, namespace: "ns", interval: time.Minute, wantErr: "--heartbeat-interval=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Heartbeat{Namespace: tc.namespace, Interval: tc.interval}).validate(tc.node)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// notifyingProbe is a scriptedProbe that can say it has news, as the LLDP probe's listeners do.
type notifyingProbe struct {
	mu      sync.Mutex
	res     discovery.Result
	changed chan struct{}
}

func (p *notifyingProbe) Name() string { return "lldp" }
func (p *notifyingProbe) Run(context.Context) (discovery.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res, nil
}
func (p *notifyingProbe) Changed() <-chan struct{} { return p.changed }

// A neighbour heard between cycles is published after ChangeDelay, not at the next interval.
func TestRunPublishesNewsOfBackgroundProbesEarly(t *testing.T) {
	testenv.Require(t)
	probe := &notifyingProbe{changed: make(chan struct{}, 1)}
	var clock time.Time
	node := "agent-news-1"
	a := newAgent(t, node, &clock, probe)
	a.Now = nil
	a.Config.Interval = time.Hour
	a.Config.ChangeDelay = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 20 s (the interval is an hour)", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("first write", func() bool { return count(a.Metrics.writes) == 1 })
	probe.mu.Lock()
	probe.res.Neighbors = []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:0a")}
	probe.mu.Unlock()
	probe.changed <- struct{}{}
	waitFor("write of the new neighbour", func() bool { return count(a.Metrics.writes) == 2 })
	if n := getReport(t, node).Spec.Neighbors; len(n) != 1 || n[0].ChassisID != "02:00:00:00:00:0a" {
		t.Errorf("neighbours = %+v, want the one heard", n)
	}
}

// After its first apply a Heartbeat patches the renew time alone; a Lease deleted meanwhile is applied again
// whole at once, with its owner, labels and duration.
func TestHeartbeatPatchesAfterItsFirstApply(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "agent-heartbeat-patch"}}
	if err := testenv.Shared.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	owner := func(context.Context) (*metav1.OwnerReference, error) {
		return &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}, nil
	}
	h := &Heartbeat{Client: reportClient(t).(HeartbeatClient), Namespace: "default", Interval: time.Minute}
	now := time.Unix(1_800_000_000, 0)
	// state is what a renewal left in the Lease: its managed-field operations, renew time and owner.
	type state struct {
		Operations []string
		Renewed    time.Time
		Owned      bool
	}
	read := func() state {
		l := getLease(t, node.Name)
		var s state
		for _, m := range l.ManagedFields {
			s.Operations = append(s.Operations, string(m.Operation))
		}
		s.Renewed = l.Spec.RenewTime.Time
		s.Owned = len(l.OwnerReferences) == 1 && l.OwnerReferences[0].UID == node.UID
		return s
	}
	var got []state
	for i := range 3 {
		if i == 2 {
			if err := h.Client.DeleteHeartbeat(ctx, "default", node.Name); err != nil {
				t.Fatal(err)
			}
		}
		now = now.Add(time.Minute)
		if err := h.Beat(ctx, node.Name, now, owner); err != nil {
			t.Fatalf("renewal %d: %v", i, err)
		}
		got = append(got, read())
	}
	t0 := time.Unix(1_800_000_000, 0)
	want := []state{
		{Operations: []string{"Apply"}, Renewed: t0.Add(time.Minute), Owned: true},
		{Operations: []string{"Apply", "Update"}, Renewed: t0.Add(2 * time.Minute), Owned: true},
		{Operations: []string{"Apply"}, Renewed: t0.Add(3 * time.Minute), Owned: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Lease after each renewal (-want +got):\n%s", diff)
	}
}
