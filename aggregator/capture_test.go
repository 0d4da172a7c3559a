package aggregator

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testenv"
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
	if n := counterValue(r.Metrics.conflicts.WithLabelValues(SourceReports, ibfabric.Name)); n != 1 {
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
