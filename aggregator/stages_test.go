package aggregator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// TestStagesAreWiredToTheirReconciler shows that each stage's accessor hands out the Reconciler's own stage,
// wired to it, with its maps made, and that calling it again keeps the state the stage holds between passes.
func TestStagesAreWiredToTheirReconciler(t *testing.T) {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// wired returns the stage's Reconciler, calling the accessor.
		wired func(r *Reconciler) *Reconciler
		// keep leaves state in the stage, through the accessor; kept reads it back through the accessor again.
		keep func(r *Reconciler)
		kept func(r *Reconciler) any
		want any
	}{
		{name: "evidence", wired: func(r *Reconciler) *Reconciler { return r.stageEvidence().r },
			keep: func(r *Reconciler) { r.stageEvidence().ages["n1"] = reportExpired },
			kept: func(r *Reconciler) any { return r.stageEvidence().ages }, want: map[string]reportAge{"n1": reportExpired}},
		{name: "poll", wired: func(r *Reconciler) *Reconciler { return r.stagePoll().r },
			keep: func(r *Reconciler) { r.stagePoll().polled = []*polledSource{{}} },
			kept: func(r *Reconciler) any { return len(r.stagePoll().sourceList()) }, want: 1},
		{name: "infer", wired: func(r *Reconciler) *Reconciler { return r.stageInfer().r },
			keep: func(r *Reconciler) { r.stageInfer().previousTree = &topology.Tree{} },
			kept: func(r *Reconciler) any { return r.stageInfer().previousTree != nil }, want: true},
		{name: "health", wired: func(r *Reconciler) *Reconciler { return r.stageHealth().r },
			keep: func(r *Reconciler) { r.stageHealth().fabricHealth.planErr = "bad plan" },
			kept: func(r *Reconciler) any { return r.stageHealth().fabricHealth.planErr }, want: "bad plan"},
		{name: "guard", wired: func(r *Reconciler) *Reconciler { return r.stageGuard().r },
			keep: func(r *Reconciler) { r.stageGuard().absentSince["hn"] = seen },
			kept: func(r *Reconciler) any { return r.stageGuard().absentSince }, want: map[string]time.Time{"hn": seen}},
		{name: "write", wired: func(r *Reconciler) *Reconciler { return r.stageWrite().r },
			keep: func(r *Reconciler) { r.stageWrite().hyperNodes.written.note("hn", 0, "1") },
			kept: func(r *Reconciler) any { return r.stageWrite().hyperNodes.written.behind("hn", "1", 0) }, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{}
			if got := tc.wired(r); got != r {
				t.Fatalf("the %s stage is wired to %p, not to its Reconciler %p", tc.name, got, r)
			}
			tc.keep(r)
			if diff := cmp.Diff(tc.want, tc.kept(r)); diff != "" {
				t.Errorf("the %s stage's state after a second call (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}
