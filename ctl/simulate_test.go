package ctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulate replays a small generated trace, saves it, and replays the saved trace to the same table.
func TestSimulate(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "trace.json")
	out, _, err := run(t, "simulate", "--nodes", "128", "--nodes-per-leaf", "16", "--leaves-per-spine", "4", "--jobs", "60", "--max-pods", "32", "--save-trace", saved)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "fabricmap  100.0 %") {
		t.Errorf("fabricmap should place every gang at the optimal tier:\n%s", out)
	}
	again, _, err := run(t, "simulate", "--nodes", "128", "--nodes-per-leaf", "16", "--leaves-per-spine", "4", "--trace", saved)
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Errorf("replaying the saved trace gave\n%s\nwant\n%s", again, out)
	}
}

// TestSimulateBadTrace names the bad field of a trace.
func TestSimulateBadTrace(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"pods":4,"dp":3,"pp":2,"gpusPerPod":8,"duration":60}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "simulate", "--trace", bad); err == nil || !strings.Contains(err.Error(), "trace[0].dp") {
		t.Fatalf("got %v, want an error naming trace[0].dp", err)
	}
}
