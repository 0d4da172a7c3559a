package ctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSimulate replays a small generated trace through fabricmap and the in-tree TopologyPlacement with the leaf
// and the spine key, saves it, and replays the saved trace to the same tables.
func TestSimulate(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "trace.json")
	out, _, err := run(t, "simulate", "--nodes", "128", "--nodes-per-leaf", "16", "--leaves-per-spine", "4", "--jobs", "60", "--max-pods", "32", "--save-trace", saved)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		for _, p := range []string{"fabricmap ", "in-tree leaf key ", "in-tree spine key "} {
			if strings.HasPrefix(l, p) {
				rows[p]++
				if p == "fabricmap " && rows[p] == 1 && strings.Fields(l)[1] != "100.0" {
					t.Errorf("fabricmap should place every gang at the optimal tier: %s", l)
				}
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"fabricmap ": 2, "in-tree leaf key ": 2, "in-tree spine key ": 2}, rows); diff != "" {
		t.Errorf("rows of the two tables by placer (-want +got):\n%s\n%s", diff, out)
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

// TestSimulateNetwork prints the step-time table, prices the same trace dearer on the generic fabric than on
// the non-blocking SuperPOD, and names the flag of a bad network.
func TestSimulateNetwork(t *testing.T) {
	args := []string{"simulate", "--nodes", "128", "--nodes-per-leaf", "16", "--leaves-per-spine", "4", "--jobs", "60", "--max-pods", "32"}
	slowdown := map[string]string{}
	for _, net := range []string{"generic", "superpod"} {
		out, _, err := run(t, append(args, "--network", net)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "mean step slowdown") || !strings.Contains(out, "network "+net) {
			t.Fatalf("--network %s: no step-time table:\n%s", net, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "fabricmap ") {
				slowdown[net] = strings.Fields(l)[4] // the step-time table's row comes last
			}
		}
	}
	if slowdown["generic"] <= slowdown["superpod"] {
		t.Errorf("mean slowdown generic %s, superpod %s; want the oversubscribed fabric slower", slowdown["generic"], slowdown["superpod"])
	}
	for flag, bad := range map[string][]string{
		"--network":          {"--network", "torus"},
		"--oversubscription": {"--oversubscription", "0.5"},
	} {
		if _, _, err := run(t, append(args, bad...)...); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%v: got %v, want an error naming %s", bad, err, flag)
		}
	}
}
