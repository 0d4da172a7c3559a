package ibfabric

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// BenchmarkHostileCaptures reads hostile captures, gzipped into a file as a ConfigMap would hold them, through
// the aggregator's reader (Capture.Evidence: the files, gunzip, the parse within the default limits) and
// reports the peak heap of each read, which must refuse the capture: past a limit (ib.ErrOverLimit), or
// partial (ErrPartialCapture) when it fits them. The shapes: the (switch records naming new CAs with
// 65,000-byte descriptions), the same with descriptions just within the cap up to the text cap, many small CA
// records (every byte of text kept as a node, a link and a peer: the kept cap), the same with long
// descriptions, a gzip bomb (1 GiB of text in about 1 MB) and one endless line. Target: the worst at most
// 256 MiB (hack/bench.sh).
func BenchmarkHostileCaptures(b *testing.B) {
	under := ib.DefaultMaxTextBytes - 1<<20 // just within the text cap
	for _, h := range []ibtest.Hostile{
		ibtest.SwitchesNamingCAs(65_000, 256<<20),
		ibtest.SwitchesNamingCAs(1000, under),
		ibtest.CARecords(16, under),
		ibtest.CARecords(1000, under),
		ibtest.RepeatedRecord(1 << 30),
		ibtest.LongLine(256 << 20),
	} {
		b.Run(h.Name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "capture.gz")
			gz := writeHostile(b, h, path, false)
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				runtime.GC() // each read from a collected heap, as after a restart
				b.StartTimer()
				heap := ibtest.StartHeapSampler()
				c := NewCapture(path)
				c.Log = slog.New(slog.DiscardHandler)
				_, err := c.Evidence(context.Background())
				peak = max(peak, heap.Stop())
				if !errors.Is(err, ib.ErrOverLimit) && !errors.Is(err, ErrPartialCapture) {
					b.Fatalf("the hostile capture was not refused: %v", err)
				}
				if c.Fabric() != nil || c.file.fabric != nil {
					b.Fatal("the refused capture's fabric is kept")
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(gz)/(1<<10), "gzip-KiB")
		})
	}
}
