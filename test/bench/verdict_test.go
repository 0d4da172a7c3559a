// Package bench checks that hack/bench.sh's verdict cannot lie: a result file with nothing judged, a size the
// convergence benchmark has no targets for, or a missing figure fails, as a missed target does.
package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// convergeFigures are the figures of a BenchmarkConvergeScale run at 50,016 nodes, every target met, by unit.
var convergeFigures = []struct{ value, unit string }{
	{"95", "cold-converge-s"}, {"9", "moved-converge-s"}, {"480", "peak-RSS-MiB"}, {"416", "heartbeats-per-s"},
	{"416.8", "heartbeats-target-per-s"}, {"5", "node-labels-per-node"}, {"0", "steady-writes"}, {"0", "writes-beyond-one"},
	{"3000", "apiserver-peak-RSS-MiB"}, {"400", "etcd-peak-RSS-MiB"},
}

// convergeTargetFigures are the targets the benchmark reports for a size that has them.
var convergeTargetFigures = []struct{ value, unit string }{{"120", "cold-target-s"}, {"10", "moved-target-s"}, {"512", "RSS-target-MiB"}}

// convergeLine is a BenchmarkConvergeScale result line as `go test -bench` prints it: nodes, the figures but
// the one of unit without (none when empty), with the targets for the size or not, and value in place of the
// figure of unit replace (none when empty).
func convergeLine(nodes string, targets bool, without, replace, value string) string {
	l := "BenchmarkConvergeScale-2 1 1 ns/op " + nodes + " nodes"
	figures := convergeFigures
	if targets {
		figures = append(slices.Clone(figures), convergeTargetFigures...)
	}
	for _, f := range figures {
		switch f.unit {
		case without:
		case replace:
			l += " " + value + " " + f.unit
		default:
			l += " " + f.value + " " + f.unit
		}
	}
	return l + "\n"
}

func TestJudgeConvergence(t *testing.T) {
	type testCase struct {
		name, output string
		pass         bool
		says         []string
	}
	cases := []testCase{
		{name: "a size with targets, all met", output: convergeLine("50016", true, "", "", ""), pass: true, says: []string{"all 6 targets met"}},
		{name: "a size without targets fails", output: convergeLine("100032", false, "", "", ""),
			says: []string{"NOT MET: no target for this size", "3 of 6 targets missed"}},
		{name: "no figure at all fails", output: "ok  \tgithub.com/fabricmap/fabricmap/test/e2e\t1s\n",
			says: []string{"NOT MET: no figure", "targets missed"}},
		{name: "a write beyond one per object fails", output: convergeLine("50016", true, "", "writes-beyond-one", "3"),
			says: []string{"writes beyond one per object", "1 of 6 targets missed"}},
		{name: "heartbeats behind the agents' rate fail", output: convergeLine("50016", true, "", "heartbeats-per-s", "300"),
			says: []string{"heartbeats short of the agents' rate", "1 of 6 targets missed"}},
		{name: "1 % moved over its target fails", output: convergeLine("50016", true, "", "moved-converge-s", "13.2"),
			says: []string{"1 % of nodes moved", "1 of 6 targets missed"}},
	}
	// Each figure missing fails the verdict, whether judged against a target or only printed.
	for _, f := range convergeFigures {
		cases = append(cases, testCase{name: "without " + f.unit, output: convergeLine("50016", true, f.unit, "", ""),
			says: []string{"NOT MET: no figure", "targets missed"}})
	}
	for _, tc := range cases {
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
