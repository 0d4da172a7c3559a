package ibfabric

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/topology"
)

// BenchmarkCaptureToTree is the offline path of a whole fabric (`fabricmap topology --from-ibnetdiscover`, the
// aggregator's capture file): capture text to fabric, evidence and tree, for a three-tier fat tree of 2,048,
// 15,000 and 50,016 hosts with 8 rails (15k: about 1.1 million lines, 47 MB; 50k: 3.6 million lines, 160 MB,
// on switches of 255 ports, as 196 spine groups need cores of that many). The capture is read from a file as
// a stream, as the CLI and the aggregator read it, so peak-heap-MiB is the heap the parse, the evidence and
// the tree take at their highest; the capture itself is not in it. Targets:
// 15k in 5 s; 50k in 15 s within 512 MiB of heap.
func BenchmarkCaptureToTree(b *testing.B) {
	for _, tc := range []struct {
		name  string
		hosts int
		ports int // the switches' port count; 0 keeps ibtest.Scale's
	}{{"2k", 2048, 0}, {"15k", 15_000, 0}, {"50k", 50_016, 255}} {
		b.Run(tc.name, func(b *testing.B) {
			shape := ibtest.Scale(tc.hosts)
			if tc.ports > 0 {
				shape.Ports = tc.ports
			}
			path := writeCapture(b, shape)
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				// Each run from a collected heap, as one run of the CLI or the aggregator would start: not
				// with the last run's garbage on top.
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				heap := ibtest.StartHeapSampler()
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				// Past the default limits at 50k (160 MB of text): --capture-max-mib 256, as the aggregator
				// would be given.
				fab, _, err := ib.ParseContext(context.Background(), f, ib.ParseOptions{Limits: (&CaptureOptions{MaxMiB: 256}).Limits()})
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				in, _, err := Evidence(context.Background(), fab, Options{})
				if err != nil {
					b.Fatal(err)
				}
				tree, problems := topology.Build(in, topology.BuildOptions{})
				if len(problems) > 0 || len(tree.Unplaced) > 0 || len(in.Nodes) != tc.hosts {
					b.Fatalf("%d nodes, problems %v, unplaced %d", len(in.Nodes), problems[:min(3, len(problems))], len(tree.Unplaced))
				}
				peak = max(peak, heap.Stop())
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// writeCapture writes shape's capture to a file of the benchmark's and returns its path.
func writeCapture(b *testing.B, shape ibtest.FatTree) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "capture.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := shape.WriteTo(w); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
