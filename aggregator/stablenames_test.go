package aggregator

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A rail leaf that drops out of the capture renames nothing: the rail group's HyperNode stays, none is to be
// deleted, and when the leaf comes back nothing changes either.
func TestRailLeafDownKeepsNames(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full, down := read("railgroup-su.txt"), read("railgroup-su-rail0-down.txt")
	file := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}
	reconcileOnce(t, r)
	want := map[string][]string{
		"fabric":             {"ib-su1-rail0-rails", "ib-su2-leaf"},
		"ib-su1-rail0-rails": {"gpu-01", "gpu-02", "gpu-03"},
		"ib-su2-leaf":        {"gpu-11"},
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Fatalf("HyperNodes = %v, want %v", got, want)
	}
	for _, step := range []struct {
		name    string
		capture []byte
	}{{"ib-su1-rail0 drops out of the capture", down}, {"ib-su1-rail0 comes back", full}} {
		if err := os.WriteFile(file, step.capture, 0o644); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute) // the next look at the file is due
		reconcileOnce(t, r)
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r)
		if got := hyperNodes(t); !equal(got, want) {
			t.Errorf("%s: HyperNodes = %v, want %v", step.name, got, want)
		}
		if len(r.absentSince) > 0 {
			t.Errorf("%s: HyperNodes waiting to be deleted: %v", step.name, r.absentSince)
		}
	}
}
