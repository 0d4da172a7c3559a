package aggregator

import "testing"

// TestCacheBehind: a version from before the reconciler's last write of a HyperNode means the cache lags; a
// newer one (the write seen, or another writer's) ends the watch, as does the HyperNode's deletion.
func TestCacheBehind(t *testing.T) {
	r := &Reconciler{}
	r.noteWritten("leaf-a", []string{"10", "11"})
	r.noteWritten("leaf-b", []string{"20"})
	for _, step := range []struct {
		name, version string
		want          bool
	}{
		{"leaf-a", "10", true},  // from before the apply
		{"leaf-a", "11", true},  // the apply seen, not the status after it
		{"leaf-a", "12", false}, // the last write seen
		{"leaf-a", "10", false}, // forgotten once seen
		{"leaf-c", "1", false},  // never written here
	} {
		if got := r.cacheBehind(step.name, step.version); got != step.want {
			t.Errorf("cacheBehind(%s, %s) = %v, want %v", step.name, step.version, got, step.want)
		}
	}
	r.forgetWritten("leaf-b")
	if r.cacheBehind("leaf-b", "20") {
		t.Error("a deleted HyperNode's versions were kept")
	}
}
