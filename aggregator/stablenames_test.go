package aggregator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
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

// Names survive a restart: a new aggregator (or a new leader), whose first tree is built from a capture where
// the rail leaf the group is named after has gone, reads the switches each HyperNode stands for from its
// annotation and keeps every name; nothing is to be deleted.
func TestRailLeafDownAcrossRestartKeepsNames(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	dir := filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata")
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	before := newReconciler(t, time.Minute, clock)
	before.Sources = []sources.Spec{{Source: ibfabric.NewCapture(filepath.Join(dir, "railgroup-su.txt"))}}
	reconcileOnce(t, before)
	want := hyperNodes(t)
	if _, ok := want["ib-su1-rail0-rails"]; !ok {
		t.Fatalf("HyperNodes = %v, want one named ib-su1-rail0-rails", want)
	}
	var hn topologyv1alpha1.HyperNode
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: "ib-su1-rail0-rails"}, &hn); err != nil {
		t.Fatal(err)
	}
	if got := hn.Annotations[hypernodegen.SwitchesAnnotation]; !strings.Contains(got, ",") {
		t.Errorf("annotation %s = %q, want the group's leaves", hypernodegen.SwitchesAnnotation, got)
	}

	after := newReconciler(t, time.Minute, clock)
	after.Sources = []sources.Spec{{Source: ibfabric.NewCapture(filepath.Join(dir, "railgroup-su-rail0-down.txt"))}}
	reconcileOnce(t, after)
	if got := hyperNodes(t); !equal(got, want) {
		t.Errorf("after a restart without ib-su1-rail0: HyperNodes = %v, want %v", got, want)
	}
	if len(after.absentSince) > 0 {
		t.Errorf("HyperNodes waiting to be deleted after the restart: %v", after.absentSince)
	}
}
