package ibnetdiscover

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// writeScaleCapture writes the capture of ibtest.Scale(hosts) to a file and returns its path.
func writeScaleCapture(tb testing.TB, hosts int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "capture.txt")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := ibtest.Scale(hosts).WriteTo(f); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkProbeFabric is one agent's probe run on the capture of a three-tier fat tree of 2,048 and of
// 15,000 hosts with 8 rails (the latter about 1.1 million lines, 47 MB), read from a file (--ibnetdiscover-file)
// and from the tool's output (a stand-in that prints the file). peak-heap-MiB is the heap in use at its
// highest during the run; the chart gives the agent 64 MiB in all. Target for 15k: 16 MiB of heap.
func BenchmarkProbeFabric(b *testing.B) {
	for _, tc := range []struct {
		name  string
		hosts int
	}{{"2k", 2048}, {"15k", 15_000}} {
		b.Run(tc.name, func(b *testing.B) {
			capture := writeScaleCapture(b, tc.hosts)
			node := ibtest.Scale(tc.hosts).HostName(tc.hosts / 2)
			fromTool := New(discovery.Config{NodeName: node, SysfsRoot: fakeSysfs(b, "InfiniBand")}, Settings{})
			fromTool.Runner.Path = fakeTool(b, "exec cat '"+capture+"'")
			for _, run := range []struct {
				name  string
				probe func() *Probe
			}{
				{"file", func() *Probe { return New(discovery.Config{NodeName: node}, Settings{File: capture}) }},
				{"tool", func() *Probe { p := *fromTool; return &p }},
			} {
				b.Run(run.name, func(b *testing.B) {
					runtime.GC()
					b.ReportAllocs()
					var peak uint64
					for b.Loop() {
						heap := ibtest.StartHeapSampler()
						p := run.probe()
						res, err := p.Run(context.Background())
						if err != nil || len(res.Neighbors) != 8 || len(res.Warnings) > 0 {
							b.Fatalf("Run = %d neighbours, warnings %q, %v; want 8 and no warning", len(res.Neighbors), res.Warnings, err)
						}
						peak = max(peak, heap.Stop())
						runtime.KeepAlive(p) // what the probe keeps until its next run counts
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				})
			}
		})
	}
}
