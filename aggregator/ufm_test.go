package aggregator

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// TestStalledUFMDoesNotHoldUpTheTree has UFM on 127.0.0.1 answer 503 with Retry-After: 300, as UFM under load
// does. Its poll waits as long as the client's cap on Retry-After lets it and gives up at its deadline
// (counted); meanwhile every reconcile rebuilds the tree from the reports: a node whose report comes while the
// poll is in flight has its HyperNode at once, and UFM's last good fabric stays.
func TestStalledUFMDoesNotHoldUpTheTree(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	var broken atomic.Value
	broken.Store("")
	// The client's defaults: 4 retries, Retry-After honoured up to 30 s.
	c, err := ufm.NewClient(threetierUFM(t, &broken))
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 5 * time.Second
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: &ufm.Source{Client: c}, Interval: 5 * time.Minute, PollTimeout: deadline}}
	reconcileOnce(t, r)
	fromUFM := hyperNodeTiers(t)
	if maxTier(fromUFM) < 3 {
		t.Fatalf("UFM's 3-tier fabric gave HyperNodes %v", fromUFM)
	}

	broken.Store("busy")
	clock.t = clock.t.Add(6 * time.Minute) // the next UFM poll is due
	began := time.Now()
	reconcileOnce(t, r)
	upsertReport(t, report("stalled-n1", "77"))
	reconcileOnce(t, r)
	if got := hyperNodes(t)["sw-77"]; !slices.Equal(got, []string{"stalled-n1"}) {
		t.Errorf("while UFM stalls, the new report's leaf sw-77 holds %v, want [stalled-n1]", got)
	}
	p := r.polls.polled[0]
	p.mu.Lock()
	inFlight := p.running != nil
	p.mu.Unlock()
	if !inFlight {
		t.Errorf("the UFM poll ended before the rebuilds (%v after it began), want it still waiting on Retry-After", time.Since(began))
	}

	settleSources(t, r)
	if took := time.Since(began); took > deadline+5*time.Second {
		t.Errorf("the UFM poll ended %v after it began, want it to give up at its deadline of %v", took, deadline)
	}
	reconcileOnce(t, r)
	if n := counterValue(r.Metrics.sourcePollTimeouts.WithLabelValues(ufm.Name)); n != 1 {
		t.Errorf("UFM poll timeouts counted = %v, want 1", n)
	}
	if stale := gaugeValue(t, r.Metrics.sourceStale.WithLabelValues(ufm.Name)); stale != 1 {
		t.Errorf("UFM stale = %v, want 1", stale)
	}
	got := hyperNodeTiers(t)
	for name, tier := range fromUFM {
		// The root now holds sw-77 beside UFM's core domain, one tier higher; every domain UFM gave is kept.
		if name != r.Config.RootName && got[name] != tier {
			t.Errorf("HyperNode %s: tier %d after UFM stalled, want UFM's last good %d (HyperNodes %v)", name, got[name], tier, got)
		}
	}
}
