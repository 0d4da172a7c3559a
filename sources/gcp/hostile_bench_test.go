package gcp_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
)

// BenchmarkHostileCloudAnswers reads hostile Compute Engine answers through the source, the real SDK and its
// capped HTTP client, from the stand-in on 127.0.0.1: a page of 500 MB (streamed; refused at the body cap),
// a page just under the cap served again by a token that comes back, and a block ID just under the cap
// (decoded, then refused by the string cap). Reported: the peak heap of one poll (peak-heap-MiB; the
// stand-in's copy of an answer it builds in memory included). Target: 256 MiB for the worst (hack/bench.sh).
func BenchmarkHostileCloudAnswers(b *testing.B) {
	nearCap := cloudsource.MaxBodyBytes - 64<<10
	hugeBlock := slices.Clone(instances)
	hugeBlock[0].Block = strings.Repeat("b", nearCap)
	for _, tc := range []struct {
		name string
		api  func() *gcptest.API
	}{
		{"gcp-500MB-page", func() *gcptest.API { return &gcptest.API{Instances: instances, Padding: 500 << 20} }},
		{"gcp-page-under-the-cap-repeated", func() *gcptest.API {
			return &gcptest.API{Instances: instances, Padding: nearCap, PageSize: 2, RepeatTokens: true}
		}},
		{"gcp-ID-under-the-cap", func() *gcptest.API { return &gcptest.API{Instances: hugeBlock} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			api := tc.api()
			api.Project = project
			s := source(b, api, []string{zoneA}, clusterNodes, nil)
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				heap := ibtest.StartHeapSampler()
				_, err := s.Evidence(context.Background())
				peak = max(peak, heap.Stop())
				if !errors.Is(err, cloudsource.ErrRefused) {
					b.Fatalf("error %v, want the answer refused", err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
