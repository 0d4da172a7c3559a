package aggregator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A capture of the whole fabric gives the tiers above the leaves; where a report disagrees, the report wins.
func TestCaptureGivesUpperTiers(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	capture, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata/threetier.txt"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(file, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}

	// gpu-a1's agent says it is cabled to leaf-b1, the capture says leaf-a1: the report wins.
	a1 := &v1alpha1.NodeFabricReport{}
	a1.Name = "gpu-a1"
	a1.Spec.Neighbors = []v1alpha1.LinkNeighbor{{Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1",
		ChassisID: "0xB83FD20300A10023", ChassisIDSubtype: "guid", PortID: "7", SystemName: "ib-leaf-b1"}}
	upsertReport(t, a1)

	requeue := reconcileOnce(t, r)
	want := map[string][]string{
		"fabric":     {"ib-spine-a", "ib-spine-b"},
		"ib-spine-a": {"ib-leaf-a1", "ib-leaf-a2"},
		"ib-spine-b": {"ib-leaf-b1"},
		"ib-leaf-a1": {"gpu-a2"},
		"ib-leaf-a2": {"gpu-a3"},
		"ib-leaf-b1": {"gpu-a1", "gpu-b1"},
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Fatalf("HyperNodes = %v, want %v", got, want)
	}
	if n := counterValue(r.Metrics.conflicts.WithLabelValues(pipeline.SourceReports, ibfabric.Name)); n != 1 {
		t.Errorf("conflicts counted = %v, want 1", n)
	}
	if requeue <= 0 || requeue > time.Minute {
		t.Errorf("requeue after %v, want the capture rechecked within a minute", requeue)
	}

	t.Run("a broken capture keeps the last good one", func(t *testing.T) {
		if err := os.WriteFile(file, []byte("garbage\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := writes(r)
		clock.t = clock.t.Add(time.Minute) // the next look at the file is due
		reconcileOnce(t, r)                // it begins, beside the rebuild
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r) // its outcome is taken in
		if got := hyperNodes(t); !equal(got, want) || writes(r) != before {
			t.Fatalf("a broken capture changed the HyperNodes: %v", got)
		}
		if n := counterValue(r.Metrics.sourceErrors.WithLabelValues(ibfabric.Name)); n != 1 {
			t.Errorf("source errors counted = %v, want 1", n)
		}
	})
}

// A capture cut at a record boundary (the SuperPOD capture after 12 of its 24 switch records: 16 of its 32
// hosts) is held back: the HyperNodes stay those of the last complete capture, the source is stale, and one
// Warning Event on the leader Lease says what the capture lacks, however many polls find it; a complete
// capture is taken in again.
func TestPartialCaptureIsHeldBack(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "ib/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	complete, cut := fixture("superpod.txt"), fixture("truncated-record-boundary.txt")
	file := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(file, complete, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	var events eventLog
	r.Events = &events
	r.Config.DeletionGuard = &DeletionGuard{Lease: types.NamespacedName{Namespace: "default", Name: "fabricmap-aggregator"}}
	r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}
	reconcileOnce(t, r)
	want := hyperNodes(t)
	if len(want["ib-su1-leaf-r1-rails"]) != 16 || len(want["ib-su2-leaf-r1-rails"]) != 16 {
		t.Fatalf("HyperNodes of the complete capture = %v, want both units' 16 hosts", want)
	}
	stale := func() float64 { return gaugeValue(t, r.Metrics.sourceStale.WithLabelValues(ibfabric.Name)) }

	// poll swaps the file's content (a ConfigMap update), lets the next poll begin and takes in its outcome.
	poll := func(content []byte) {
		t.Helper()
		if content != nil {
			if err := os.WriteFile(file, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		clock.t = clock.t.Add(time.Minute)
		reconcileOnce(t, r)
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r)
	}
	before := writes(r)
	poll(cut)
	poll(nil) // the same partial capture, polled again
	if got := hyperNodes(t); !equal(got, want) || writes(r) != before {
		t.Fatalf("a partial capture changed the HyperNodes: %v", got)
	}
	if stale() != 1 {
		t.Errorf("source stale = %v, want 1 while the partial capture is held back", stale())
	}
	var partial []string
	for _, e := range events {
		if strings.HasPrefix(e, "Lease/fabricmap-aggregator Warning "+ReasonCapturePartial+": ") {
			partial = append(partial, e)
		}
	}
	if len(partial) != 1 || !strings.Contains(partial[0], "source ibnetdiscover: fabric capture "+file) ||
		!strings.Contains(partial[0], "port lines name 12 switches and 76 CAs that have no record of their own") ||
		!strings.Contains(partial[0], "the last good capture stays in use") {
		t.Errorf("Events on the Lease = %q, want one saying what the partial capture lacks", partial)
	}

	poll(complete)
	if stale() != 0 {
		t.Errorf("source stale = %v after a complete capture, want 0", stale())
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Errorf("HyperNodes after the complete capture = %v, want %v", got, want)
	}
}
