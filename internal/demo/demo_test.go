package demo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestDemo runs the demo as `DEMO_EXIT=1 make demo` does, on freshly built binaries, and checks what it prints:
// the tree holds the rail groups, the NVLink domains and what UFM alone knows, and the placer placed both gangs
// where only the topology says they belong; then everything is stopped, within a minute in all.
func TestDemo(t *testing.T) {
	if _, err := testenv.AssetsDir(); errors.Is(err, testenv.ErrNoAssets) && os.Getenv("CI") != "true" {
		t.Skipf("SKIP: the demo needs a control plane: %v", err)
	}
	bin := buildBinaries(t)
	var out, logs proctest.Output
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	err := Run(ctx, DefaultFabric(), Options{BinDir: bin, Out: &out, Log: &logs, Timeout: 45 * time.Second, ExitAfterPrinting: true})
	took := time.Since(began)
	if err != nil {
		t.Fatalf("Run: %v\noutput:\n%s\nlogs:\n%s", err, out.String(), logs.String())
	}
	if took > time.Minute {
		t.Errorf("the demo took %v, want under a minute", took)
	}
	printed := out.String()
	t.Logf("the demo printed, in %v:\n%s", took, printed)

	tree := treeLines(section(printed, "==> fabricmap get hypernodes"))
	for _, tc := range []struct{ what, line string }{
		{"the rail-optimised leaves the agents reported, one domain", "sw-rail-0-rails  (tier 2, leaf, 2 nodes, source reports)"},
		{"an NVLink domain below its leaf", "nvl-7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081-1  (tier 1, accelerator, 3 nodes, source reports)"},
		{"the other NVLink domain", "nvl-1e5d7a9c-0b2f-4c6e-8d0a-1b3c5e7f9012-1  (tier 1, accelerator, 3 nodes, source reports)"},
		{"UFM's first rail-optimised unit", "ib-su1-leaf-r1-rails  (tier 2, leaf, 4 nodes, source ufm)"},
		{"UFM's second unit, dgx-06 with a rail cable down", "ib-su2-leaf-r1-rails  (tier 2, leaf, 4 nodes, source ufm)"},
		{"UFM's spines above both units", "ib-spine-1-spines  (tier 3, spine, 8 nodes, source ufm)"},
		{"a node only UFM knows", "dgx-06"},
		{"the root over both fabrics, without the node that sees no switch", "fabric  (tier 4, fabric, 16 nodes, source inferred)"},
	} {
		if !slices.Contains(tree, tc.line) {
			t.Errorf("%s: the tree has no line %q:\n%s", tc.what, tc.line, strings.Join(tree, "\n"))
		}
	}
	if slices.Contains(tree, "gpu-lonely") {
		t.Errorf("gpu-lonely, whose links see no switch, is in the tree:\n%s", strings.Join(tree, "\n"))
	}

	for _, tc := range []struct {
		gang string
		want []string
	}{
		{gang: "demo/llm-pretrain", want: []string{
			"gang demo/llm-pretrain placed in ib-su1-leaf-r1-rails (tier 2)",
			"rank 0 → dgx-01", "rank 1 → dgx-02", "rank 2 → dgx-03", "rank 3 → dgx-04",
		}},
		{gang: "demo/finetune", want: []string{
			"gang demo/finetune placed in nvl-1e5d7a9c-0b2f-4c6e-8d0a-1b3c5e7f9012-1 (tier 1)",
			"rank 0 → gpu-a4", "rank 1 → gpu-a5", "rank 2 → gpu-a6",
		}},
	} {
		if diff := cmp.Diff(tc.want, planLines(printed, tc.gang)); diff != "" {
			t.Errorf("plan of gang %s (-want +got):\n%s", tc.gang, diff)
		}
	}
	if !strings.HasSuffix(printed, "==> stopping the control plane\n") {
		t.Errorf("the demo did not end by stopping the control plane:\n%s", printed)
	}
}

// TestExitRequested reads DEMO_EXIT and CI as `make demo` sets them.
func TestExitRequested(t *testing.T) {
	for _, tc := range []struct {
		demoExit, ci string
		want         bool
	}{
		{want: false},
		{demoExit: "1", want: true},
		{demoExit: "0", want: false},
		{ci: "true", want: true},
		{ci: "false", want: false},
		{demoExit: "0", ci: "1", want: true},
	} {
		t.Setenv("DEMO_EXIT", tc.demoExit)
		t.Setenv("CI", tc.ci)
		if got := ExitRequested(); got != tc.want {
			t.Errorf("DEMO_EXIT=%q CI=%q: ExitRequested() = %v, want %v", tc.demoExit, tc.ci, got, tc.want)
		}
	}
}

// buildBinaries builds the agent and the fabricmap binary into a folder of the test's, with fabricmap-aggregator
// a link to fabricmap (the multi-call binary, as in the image), and returns the folder.
func buildBinaries(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/fabricmap-agent", "./cmd/fabricmap")
	build.Dir = testenv.RepoRoot()
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, b)
	}
	if err := os.Symlink("fabricmap", filepath.Join(bin, "fabricmap-aggregator")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// section returns the lines of printed after the line start, up to the next "==> " line.
func section(printed, start string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(printed, "\n") {
		switch {
		case l == start:
			in = true
		case in && strings.HasPrefix(l, "==> "):
			return out
		case in:
			out = append(out, l)
		}
	}
	return out
}

// treeLines strips the tree's drawing from each line.
func treeLines(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimLeft(l, "│├└─ "))
	}
	return out
}

// planLines returns the printed plan of gang (namespace/name): its first line and its ranks, trimmed, without
// the placer's explanation.
func planLines(printed, gang string) []string {
	var out []string
	for _, l := range strings.Split(printed, "\n") {
		switch {
		case strings.HasPrefix(l, "gang "+gang+" "):
			out = append(out, l)
		case len(out) > 0 && strings.HasPrefix(l, "  rank "):
			out = append(out, strings.TrimSpace(l))
		case len(out) > 0:
			return out
		}
	}
	return out
}
