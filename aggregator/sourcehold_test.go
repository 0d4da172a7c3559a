package aggregator

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// TestRestartWithFailingUFMDeletesNothing restarts the aggregator while UFM (on 127.0.0.1) fails: the HyperNodes
// only UFM knew (the spines above the reports' leaves, and the root above them) stay as written, with their
// tiers, until UFM answers again, even without a deletion guard; a stalled UFM holds the first reconcile up for firstPollWait
// at most, not for its whole poll deadline.
func TestRestartWithFailingUFMDeletesNothing(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	var broken atomic.Value
	broken.Store("")
	conf := threetierUFM(t, &broken)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	start := func(timeout time.Duration) *Reconciler {
		c, err := ufm.NewClient(conf)
		if err != nil {
			t.Fatal(err)
		}
		r := newReconciler(t, time.Minute, clock) // no deletion guard: the hold alone keeps UFM's HyperNodes
		r.Sources = []sources.Spec{{Source: &ufm.Source{Client: c}, Interval: 5 * time.Minute, PollTimeout: timeout}}
		return r
	}
	for p := 1; p <= 2; p++ { // nodes on UFM's leaves; only UFM knows the spines and the core above them
		for l := 1; l <= 2; l++ {
			for h := 1; h <= 2; h++ {
				upsertReport(t, ibReport(fmt.Sprintf("hold-p%d-l%d-%d", p, l, h), fmt.Sprintf("0xB83FD20300C0%d%d20", p, l), fmt.Sprintf("ib-p%d-leaf-%d", p, l), ""))
			}
		}
	}
	reconcileOnce(t, start(10*time.Second))
	before := hyperNodeTiers(t)
	if maxTier(before) < 3 || len(before) != 7 {
		t.Fatalf("UFM's 3-tier fabric gave HyperNodes %v", before)
	}

	broken.Store("500")
	r := start(2 * time.Second)
	reconcileOnce(t, r)
	clock.t = clock.t.Add(10 * time.Minute) // past the grace period, and UFM is polled again
	settleSources(t, r)
	reconcileOnce(t, r)
	settleSources(t, r)
	reconcileOnce(t, r)
	if diff := cmp.Diff(before, hyperNodeTiers(t)); diff != "" {
		t.Fatalf("HyperNodes changed while UFM failed since the restart (-before +after):\n%s", diff)
	}
	if got := gaugeValue(t, r.Metrics.sourceAwaited.WithLabelValues(ufm.Name)); got != 1 {
		t.Errorf("UFM awaited = %v, want 1", got)
	}

	broken.Store("busy") // Retry-After: 300, so the poll runs until its deadline
	stalled := start(40 * time.Second)
	began := time.Now()
	reconcileOnce(t, stalled)
	if took := time.Since(began); took > firstPollWait+10*time.Second {
		t.Errorf("the first reconcile took %v with UFM stalled, want it to stop waiting after %v, not the poll's deadline of 40s", took, firstPollWait)
	}
	if diff := cmp.Diff(before, hyperNodeTiers(t)); diff != "" {
		t.Errorf("HyperNodes changed while UFM stalled after a restart (-before +after):\n%s", diff)
	}

	broken.Store("")
	clock.t = clock.t.Add(10 * time.Minute)
	reconcileOnce(t, r)
	settleSources(t, r)
	reconcileOnce(t, r)
	if got := gaugeValue(t, r.Metrics.sourceAwaited.WithLabelValues(ufm.Name)); got != 0 {
		t.Errorf("UFM awaited = %v after it answered, want 0", got)
	}
	if diff := cmp.Diff(before, hyperNodeTiers(t)); diff != "" {
		t.Errorf("HyperNodes after UFM answered again (-before +after):\n%s", diff)
	}
}
