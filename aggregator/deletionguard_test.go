package aggregator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestDeletionGuardDecide(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	guard := DeletionGuard{MaxShare: 0.2, MinCount: 0, ConfirmAfter: time.Hour}
	held := guardState{held: set("a", "b", "c"), since: t0}
	cases := []struct {
		name        string
		guard       DeletionGuard
		prev        guardState
		gone        []string
		due, total  int
		now         time.Time
		confirmedAt time.Time
		want        guardDecision
		wantState   guardState
	}{
		{name: "nothing gone", guard: guard, total: 10, now: t0,
			want: guardDecision{Verdict: guardAllow}},
		{name: "at the share limit: deleted", guard: guard, gone: []string{"a", "b"}, due: 2, total: 10, now: t0,
			want: guardDecision{Verdict: guardAllow}},
		{name: "above the share: held from now", guard: guard, gone: []string{"a", "b", "c"}, due: 3, total: 10, now: t0,
			want: guardDecision{Verdict: guardHold, Started: true, Since: t0}, wantState: held},
		{name: "above the share but under the min count: deleted", guard: DeletionGuard{MaxShare: 0.2, MinCount: 3},
			gone: []string{"a", "b", "c"}, due: 3, total: 4, now: t0, want: guardDecision{Verdict: guardAllow}},
		{name: "all gone, under the min count: held", guard: DeletionGuard{MaxShare: 1, MinCount: 3},
			gone: []string{"a", "b"}, due: 2, total: 2, now: t0,
			want: guardDecision{Verdict: guardHold, Started: true, Since: t0}, wantState: guardState{held: set("a", "b"), since: t0}},
		{name: "above the share, none past its grace yet: nothing to hold", guard: guard, gone: []string{"a", "b", "c"}, total: 10, now: t0,
			want: guardDecision{Verdict: guardAllow}},
		{name: "the same set later: held since its start", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(59 * time.Minute), want: guardDecision{Verdict: guardHold, Since: t0}, wantState: held},
		{name: "the set shrinks: held since its start", guard: guard, prev: held, gone: []string{"a", "c"}, due: 2, total: 5,
			now: t0.Add(time.Minute), want: guardDecision{Verdict: guardHold, Since: t0}, wantState: guardState{held: set("a", "c"), since: t0}},
		{name: "the set grows: a new hold", guard: guard, prev: held, gone: []string{"a", "b", "c", "d"}, due: 3, total: 10,
			now: t0.Add(59 * time.Minute), want: guardDecision{Verdict: guardHold, Started: true, Since: t0.Add(59 * time.Minute)},
			wantState: guardState{held: set("a", "b", "c", "d"), since: t0.Add(59 * time.Minute)}},
		{name: "unchanged for confirm-after: confirmed", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(time.Hour), want: guardDecision{Verdict: guardConfirmedByTime, Since: t0}, wantState: guardState{confirmed: set("a", "b", "c")}},
		{name: "confirm-after 0 never confirms by itself", guard: DeletionGuard{MaxShare: 0.2}, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(1000 * time.Hour), want: guardDecision{Verdict: guardHold, Since: t0}, wantState: held},
		{name: "an admin confirms after the hold began", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(5 * time.Minute), confirmedAt: t0.Add(4 * time.Minute),
			want: guardDecision{Verdict: guardConfirmedByAdmin, Since: t0}, wantState: guardState{confirmed: set("a", "b", "c")}},
		{name: "a confirmation older than the hold is ignored and said", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(5 * time.Minute), confirmedAt: t0.Add(-time.Minute),
			want:      guardDecision{Verdict: guardHold, Since: t0, Stale: t0.Add(-time.Minute)},
			wantState: guardState{held: set("a", "b", "c"), since: t0, refused: t0.Add(-time.Minute)}},
		{name: "the same stale confirmation is said once", guard: guard, prev: guardState{held: set("a", "b", "c"), since: t0, refused: t0.Add(-time.Minute)},
			gone: []string{"a", "b", "c"}, due: 3, total: 10, now: t0.Add(6 * time.Minute), confirmedAt: t0.Add(-time.Minute),
			want:      guardDecision{Verdict: guardHold, Since: t0},
			wantState: guardState{held: set("a", "b", "c"), since: t0, refused: t0.Add(-time.Minute)}},
		{name: "a confirmation dated in the future is refused and said", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(5 * time.Minute), confirmedAt: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
			want:      guardDecision{Verdict: guardHold, Since: t0, Future: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
			wantState: guardState{held: set("a", "b", "c"), since: t0, refused: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "a future confirmation confirms no later hold either", guard: guard, prev: guardState{refused: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)},
			gone: []string{"a", "b", "c"}, due: 3, total: 10, now: t0, confirmedAt: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
			want:      guardDecision{Verdict: guardHold, Started: true, Since: t0},
			wantState: guardState{held: set("a", "b", "c"), since: t0, refused: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "a confirmation a minute ahead (clock skew) confirms", guard: guard, prev: held, gone: []string{"a", "b", "c"}, due: 3, total: 10,
			now: t0.Add(5 * time.Minute), confirmedAt: t0.Add(6 * time.Minute),
			want: guardDecision{Verdict: guardConfirmedByAdmin, Since: t0}, wantState: guardState{confirmed: set("a", "b", "c")}},
		{name: "part of a confirmed set: deleted", guard: guard, prev: guardState{confirmed: set("a", "b", "c")}, gone: []string{"b", "c"}, due: 1, total: 8,
			now: t0, want: guardDecision{Verdict: guardAllow}, wantState: guardState{confirmed: set("b", "c")}},
		{name: "beyond the confirmed set: held again", guard: guard, prev: guardState{confirmed: set("b", "c")}, gone: []string{"b", "c", "d"}, due: 1, total: 8,
			now: t0, want: guardDecision{Verdict: guardHold, Started: true, Since: t0}, wantState: guardState{held: set("b", "c", "d"), since: t0}},
		{name: "back within the limits: hold lifted", guard: guard, prev: held, gone: []string{"a"}, due: 1, total: 10, now: t0,
			want: guardDecision{Verdict: guardAllow, Lifted: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, s := c.guard.decide(c.prev, c.gone, c.due, c.guard.trips(len(c.gone), c.total), c.now, func() time.Time { return c.confirmedAt })
			if diff := cmp.Diff(c.want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantState, s, cmp.AllowUnexported(guardState{})); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeletionGuardValidate(t *testing.T) {
	cases := []struct {
		guard DeletionGuard
		err   string
	}{
		{DeletionGuard{MaxShare: 0.2, MinCount: 3, ConfirmAfter: time.Hour}, ""},
		{DeletionGuard{MaxShare: 1.5}, "max share 1.5 is not between 0 and 1"},
		{DeletionGuard{MinCount: -1}, "min count -1 is negative"},
		{DeletionGuard{ConfirmAfter: -time.Second}, "confirm-after -1s is negative"},
	}
	for _, c := range cases {
		got := ""
		if err := c.guard.Validate(); err != nil {
			got = err.Error()
		}
		if c.err == "" && got != "" || !strings.Contains(got, c.err) {
			t.Errorf("%+v: error %q, want %q", c.guard, got, c.err)
		}
	}
}

// guardBed is a reconciler with a deletion guard, a real Event recorder and a Lease to confirm on, over the
// reports of the given nodes, each behind its own leaf (so the tree has one HyperNode per node and a root); with
// no nodes, the caller makes the reports.
func guardBed(t *testing.T, guard DeletionGuard, nodes ...string) (*Reconciler, *fakeClock) {
	t.Helper()
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))}}
	if err := testenv.Shared.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testenv.Shared.Client.Delete(context.Background(), lease) })
	guard.Lease = client.ObjectKeyFromObject(lease)

	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubernetes.NewForConfigOrDie(testenv.Shared.Config).EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	t.Cleanup(broadcaster.Shutdown)

	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Config.DeletionGuard = &guard
	r.Events = broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")
	for i, n := range nodes {
		upsertReport(t, report(n, fmt.Sprintf("%02x", 0xa0+i)))
	}
	if len(nodes) == 0 {
		return r, clock
	}
	reconcileOnce(t, r)
	if got := len(hyperNodes(t)); got != len(nodes)+1 {
		t.Fatalf("%d HyperNodes, want %d (a leaf per node and the root): %v", got, len(nodes)+1, hyperNodes(t))
	}
	return r, clock
}

// deleteReports deletes the reports of the given nodes.
func deleteReports(t *testing.T, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		if err := testenv.Shared.Client.Delete(context.Background(), &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatalf("deleting report %s: %v", n, err)
		}
	}
}

// confirmDeletions sets the confirmation annotation on the guard's Lease, as an admin does with kubectl.
func confirmDeletions(t *testing.T, key types.NamespacedName, at time.Time) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, wellknown.ConfirmDeletionsAnnotation, at.UTC().Format(time.RFC3339))
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := testenv.Shared.Client.Patch(context.Background(), lease, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("annotating Lease %s: %v", key, err)
	}
}

// waitForLeaseEvent waits for an Event with reason on the Lease key (and its UID) whose note contains text.
func waitForLeaseEvent(t *testing.T, key types.NamespacedName, reason, text string) {
	t.Helper()
	var lease coordinationv1.Lease
	if err := testenv.Shared.Client.Get(context.Background(), key, &lease); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, reason+" Event on Lease "+key.String(), func() (bool, string) {
		var list eventsv1.EventList
		if err := testenv.Shared.Client.List(context.Background(), &list, client.InNamespace(key.Namespace)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Lease" && e.Regarding.Name == key.Name {
				if e.Reason == reason && e.Regarding.UID == lease.UID && strings.Contains(e.Note, text) {
					return true, ""
				}
				seen = append(seen, e.Reason+": "+e.Note)
			}
		}
		return false, fmt.Sprintf("Events on the Lease: %q", seen)
	})
}

func names(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Every report deleted (kubectl delete nfr --all): after the grace period the HyperNodes all stay, the metrics,
// the log and an Event on the Lease say so, and only an admin's annotation lets the deletions go ahead.
func TestDeleteAllIsHeldUntilConfirmed(t *testing.T) {
	testenv.Require(t)
	nodes := []string{"guard-n1", "guard-n2", "guard-n3"}
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, MinCount: 3}, nodes...)
	key := r.Config.DeletionGuard.Lease
	before := names(hyperNodes(t))
	deleteReports(t, nodes...)
	reconcileOnce(t, r)
	clock.t = clock.t.Add(61 * time.Second)
	heldAt := clock.t
	requeue := reconcileOnce(t, r)
	if diff := cmp.Diff(before, names(hyperNodes(t))); diff != "" {
		t.Fatalf("HyperNodes deleted although every one was gone at once (-before +after):\n%s", diff)
	}
	if requeue <= 0 || requeue > confirmPoll {
		t.Errorf("requeue after %v while held, want within %v to look for a confirmation", requeue, confirmPoll)
	}
	if got := gaugeValue(t, r.Metrics.deletionsHeld); got != 4 {
		t.Errorf("deletions held = %v, want 4", got)
	}
	if got := counterValue(r.Metrics.heldPasses); got != 1 {
		t.Errorf("held passes = %v, want 1", got)
	}
	waitForLeaseEvent(t, key, ReasonDeletionsHeld, "4 of 4 managed HyperNodes (100%) are gone from the tree, the tree would be left with none")

	clock.t = clock.t.Add(24 * time.Hour) // --deletion-guard-confirm-after=0: time alone confirms nothing
	reconcileOnce(t, r)
	confirmDeletions(t, key, heldAt.Add(-time.Minute)) // a confirmation from before the hold
	reconcileOnce(t, r)
	if diff := cmp.Diff(before, names(hyperNodes(t))); diff != "" {
		t.Fatalf("HyperNodes deleted without a confirmation of this hold (-before +after):\n%s", diff)
	}
	if got := counterValue(r.Metrics.heldPasses); got != 3 {
		t.Errorf("held passes = %v, want 3", got)
	}

	confirmDeletions(t, key, clock.t)
	reconcileOnce(t, r)
	if got := hyperNodes(t); len(got) != 0 {
		t.Fatalf("HyperNodes left after the admin confirmed: %v", got)
	}
	if got := gaugeValue(t, r.Metrics.deletionsHeld); got != 0 {
		t.Errorf("deletions held = %v after the confirmation, want 0", got)
	}
	if got := counterValue(r.Metrics.deletionsConfirmed.WithLabelValues("annotation")); got != 1 {
		t.Errorf("confirmations by annotation = %v, want 1", got)
	}
	waitForLeaseEvent(t, key, ReasonDeletionsConfirmed, "confirmed by annotation")
}

// A pass within the share deletes as before; one above it is held. The share is of the HyperNodes managed now.
func TestDeletionGuardShare(t *testing.T) {
	testenv.Require(t)
	var nodes []string
	for i := range 10 {
		nodes = append(nodes, fmt.Sprintf("share-n%d", i))
	}
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, ConfirmAfter: time.Hour}, nodes...)
	cases := []struct {
		name       string
		remove     []string
		wantLeft   int
		wantHeld   float64
		wantPasses float64
	}{
		{name: "2 of 11 (18 %) go", remove: nodes[:2], wantLeft: 9},
		{name: "2 of 9 (22 %) are held", remove: nodes[2:4], wantLeft: 9, wantHeld: 2, wantPasses: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			deleteReports(t, c.remove...)
			reconcileOnce(t, r)
			clock.t = clock.t.Add(61 * time.Second)
			reconcileOnce(t, r)
			if got := len(hyperNodes(t)); got != c.wantLeft {
				t.Errorf("%d HyperNodes left, want %d: %v", got, c.wantLeft, names(hyperNodes(t)))
			}
			if got := gaugeValue(t, r.Metrics.deletionsHeld); got != c.wantHeld {
				t.Errorf("deletions held = %v, want %v", got, c.wantHeld)
			}
			if got := counterValue(r.Metrics.heldPasses); got != c.wantPasses {
				t.Errorf("held passes = %v, want %v", got, c.wantPasses)
			}
		})
	}
}

// Held deletions go ahead by themselves once the same set has stayed for --deletion-guard-confirm-after; a set
// that grows meanwhile starts the wait again.
func TestHeldDeletionsConfirmedByPersistence(t *testing.T) {
	testenv.Require(t)
	var nodes []string
	for i := range 10 {
		nodes = append(nodes, fmt.Sprintf("persist-n%d", i))
	}
	r, clock := guardBed(t, DeletionGuard{MaxShare: 0.2, ConfirmAfter: time.Hour}, nodes...)
	deleteReports(t, nodes[:5]...)
	reconcileOnce(t, r)
	clock.t = clock.t.Add(61 * time.Second)
	reconcileOnce(t, r)
	if got := gaugeValue(t, r.Metrics.deletionsHeld); got != 5 {
		t.Fatalf("deletions held = %v, want 5 (5 of 11 gone)", got)
	}
	clock.t = clock.t.Add(40 * time.Minute)
	deleteReports(t, nodes[5])
	reconcileOnce(t, r) // the set grows: the hour starts again
	regrown := clock.t
	clock.t = regrown.Add(59 * time.Minute)
	reconcileOnce(t, r)
	if got := len(hyperNodes(t)); got != 11 {
		t.Fatalf("%d HyperNodes left an hour after the first hold, want all 11: the set grew 40 minutes in", got)
	}
	if got := counterValue(r.Metrics.deletionsConfirmed.WithLabelValues("persistence")); got != 0 {
		t.Fatalf("confirmations by persistence = %v before the hour, want 0", got)
	}
	clock.t = regrown.Add(time.Hour)
	reconcileOnce(t, r)
	if got := len(hyperNodes(t)); got != 5 {
		t.Errorf("%d HyperNodes left after the set stayed an hour, want 5: %v", got, names(hyperNodes(t)))
	}
	if got := counterValue(r.Metrics.deletionsConfirmed.WithLabelValues("persistence")); got != 1 {
		t.Errorf("confirmations by persistence = %v, want 1", got)
	}
	if got := gaugeValue(t, r.Metrics.deletionsHeld); got != 0 {
		t.Errorf("deletions held = %v after the confirmation, want 0", got)
	}
	waitForLeaseEvent(t, r.Config.DeletionGuard.Lease, ReasonDeletionsHeld, "5 of 11 managed HyperNodes (45%) are gone from the tree, above the limit of 20%")
	waitForLeaseEvent(t, r.Config.DeletionGuard.Lease, ReasonDeletionsConfirmed, "confirmed by persistence after 1h0m0s")
}

// TestConfirmedBy pins which confirmation times cover a hold: the annotation holds whole seconds, so one
// written in the second the hold began counts, one from an earlier second does not.
func TestConfirmedBy(t *testing.T) {
	since := time.Date(2026, 11, 26, 22, 50, 51, 903_000_000, time.UTC)
	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"none", time.Time{}, false},
		{"the second before the hold", time.Date(2026, 11, 26, 22, 50, 50, 0, time.UTC), false},
		{"the hold's own second, truncated", time.Date(2026, 11, 26, 22, 50, 51, 0, time.UTC), true},
		{"after the hold", time.Date(2026, 11, 26, 22, 51, 30, 0, time.UTC), true},
	} {
		if got := confirmedBy(tc.at, since); got != tc.want {
			t.Errorf("%s: confirmedBy(%s, %s) = %v, want %v", tc.name, tc.at.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano), got, tc.want)
		}
	}
}
