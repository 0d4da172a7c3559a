package ibfabric

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/topology"
)

// BenchmarkCaptureToTree is the offline path of a whole fabric (`fabricmap topology --from-ibnetdiscover`, the
// aggregator's capture file): capture text to fabric, evidence and tree, for a three-tier fat tree of 2,048
// and of 15,000 hosts with 8 rails (the latter about 1.1 million lines, 47 MB). Target for 15k: 5 s.
// peak-heap-MiB counts the capture, held in memory, too.
func BenchmarkCaptureToTree(b *testing.B) {
	for _, tc := range []struct {
		name  string
		hosts int
	}{{"2k", 2048}, {"15k", 15_000}} {
		b.Run(tc.name, func(b *testing.B) {
			var capture bytes.Buffer
			if _, err := ibtest.Scale(tc.hosts).WriteTo(&capture); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				heap := ibtest.StartHeapSampler()
				fab, _, err := ib.ParseContext(context.Background(), bytes.NewReader(capture.Bytes()), ib.ParseOptions{})
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
