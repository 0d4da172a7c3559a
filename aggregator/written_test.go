package aggregator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWrittenVersions: a version from before the reconciler's last write of an object, asked with what that
// write said, means the cache lags; a newer version (the write seen, or another writer's) ends the watch, as
// does the object's deletion; a different wish is never held back.
func TestWrittenVersions(t *testing.T) {
	var w writtenVersions
	w.note("leaf-a", 0, "10", "11")
	w.note("leaf-b", 0, "20")
	leafA, leafB := labelWrite(map[string]string{"leaf": "a"}, "", ""), labelWrite(map[string]string{"leaf": "b"}, "", "")
	w.note("node-1", leafA, "5")
	type step struct {
		Name, Version string
		What          uint64
		Behind        bool
	}
	steps := []step{
		{"leaf-a", "10", 0, true},     // from before the apply
		{"leaf-a", "11", 0, true},     // the apply seen, not the status after it
		{"leaf-a", "12", 0, false},    // the last write seen
		{"leaf-a", "10", 0, false},    // forgotten once seen
		{"leaf-c", "1", 0, false},     // never written here
		{"node-1", "5", leafB, false}, // the wish changed since the write: write it
		{"node-1", "5", leafA, true},  // the same write, the cache still behind it
		{"node-1", "6", leafA, false}, // the write seen
		{"node-1", "5", leafA, false}, // and forgotten
	}
	var got []step
	for _, s := range steps {
		s.Behind = w.behind(s.Name, s.Version, s.What)
		got = append(got, s)
	}
	if diff := cmp.Diff(steps, got); diff != "" {
		t.Errorf("behind (-want +got):\n%s", diff)
	}
	w.forget("leaf-b")
	if w.behind("leaf-b", "20", 0) {
		t.Error("a deleted HyperNode's versions were kept")
	}
}

func TestLabelWriteEqualForEqualWrites(t *testing.T) {
	a := labelWrite(map[string]string{"x": "1", "y": "2"}, "", "sw1")
	b := labelWrite(map[string]string{"y": "2", "x": "1"}, "", "sw1")
	if a != b {
		t.Errorf("equal writes differ: %x and %x", a, b)
	}
	for _, other := range []uint64{
		labelWrite(map[string]string{"x": "1", "y": "3"}, "", "sw1"),
		labelWrite(map[string]string{"x": "1", "y": "2"}, "lost", "sw1"),
		labelWrite(map[string]string{"x": "1", "y": "2"}, "", ""),
		labelWrite(map[string]string{"x": "1"}, "", "sw1"),
	} {
		if other == a {
			t.Errorf("a different write compares equal: %x", other)
		}
	}
}
