// Package bench checks that hack/bench.sh's verdict cannot lie: a result file with nothing judged, a size the
// convergence benchmark has no targets for, or a missing figure fails, as a missed target does.
package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// runBench runs hack/bench.sh with args and BENCH_RESULTS=results, returning its output and whether it
// succeeded.
func runBench(t *testing.T, results string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(testenv.RepoRoot(), "hack", "bench.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "BENCH_RESULTS="+results)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running hack/bench.sh: %v", err)
	}
	return string(out), err == nil
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name, results string
		pass          bool
		says          string
	}{
		{name: "an empty result file", results: "", says: "no figure was judged"},
		{name: "only figures without a target", results: "LOST\tpeer x\n", says: "no figure was judged"},
		{name: "every target met", results: "met\ta\nmet\tb\n", pass: true, says: "all 2 targets met"},
		{name: "a target missed", results: "met\ta\nNOT MET\tb\n", says: "1 of 2 targets missed: b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := runBench(t, write(t, "results", tc.results), "verdict")
			if ok != tc.pass || !strings.Contains(out, tc.says) {
				t.Errorf("verdict passed %v, want %v, saying %q:\n%s", ok, tc.pass, tc.says, out)
			}
		})
	}
}

// convergeLine is a BenchmarkConvergeScale result line as `go test -bench` prints it, with or without the
// targets the benchmark reports for its size.
func convergeLine(nodes string, targets bool) string {
	l := "BenchmarkConvergeScale-2 1 1 ns/op " + nodes + " nodes 95 cold-converge-s 0 extra-writes 0 steady-writes 9 1pct-converge-s 900 peak-RSS-MiB 3000 apiserver-peak-RSS-MiB 400 etcd-peak-RSS-MiB"
	if targets {
		l += " 120 cold-target-s 10 1pct-target-s 1024 RSS-target-MiB"
	}
	return l + "\n"
}

func TestJudgeConvergence(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		pass         bool
		says         []string
	}{
		{name: "a size with targets, all met", output: convergeLine("50016", true), pass: true, says: []string{"all 5 targets met"}},
		{name: "a size without targets fails", output: convergeLine("100016", false),
			says: []string{"NOT MET: no target for this size", "3 of 5 targets missed"}},
		{name: "no figure at all fails", output: "ok  \tgithub.com/fabricmap/fabricmap/test/e2e\t1s\n",
			says: []string{"NOT MET: no figure", "targets missed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := write(t, "results", "")
			out, ok := runBench(t, results, "judge", write(t, "bench.out", tc.output))
			if ok != tc.pass {
				t.Errorf("judge passed %v, want %v:\n%s", ok, tc.pass, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("judge does not say %q:\n%s", s, out)
				}
			}
		})
	}
}
