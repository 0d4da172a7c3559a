package oci

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
)

// BenchmarkHostileCloudAnswers reads hostile ListComputeHosts answers through the source, the real SDK and its
// capped HTTP client, from the stand-in on 127.0.0.1: a page of 500 MB (streamed; refused at the body cap),
// a page just under the cap served again by a next page already read, and a local block OCID just under the
// cap (decoded, then refused by the string cap). Reported: the peak heap of one poll (peak-heap-MiB; the
// stand-in's copy of an answer it builds in memory included). Target: 256 MiB for the worst (hack/bench.sh).
func BenchmarkHostileCloudAnswers(b *testing.B) {
	noMetadata(b)
	nearCap := cloudsource.MaxBodyBytes - 64<<10
	for _, tc := range []struct {
		name  string
		setup func(*ocitest.API, []ocitest.Host)
	}{
		{"oci-500MB-page", func(api *ocitest.API, _ []ocitest.Host) { api.Padding = 500 << 20 }},
		{"oci-page-under-the-cap-repeated", func(api *ocitest.API, _ []ocitest.Host) {
			api.Padding, api.PageSize, api.RepeatTokens = nearCap, 2, true
		}},
		{"oci-ID-under-the-cap", func(api *ocitest.API, hosts []ocitest.Host) {
			hosts[0].LocalBlock = strings.Repeat("a", nearCap)
			api.SetHosts(hosts)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ns, hosts := ocitest.Split(ocitest.Fixture())
			api := ocitest.New(ocitest.Compartment, hosts)
			tc.setup(api, hosts)
			var logs logBuffer
			s := newSource(b, testOptions(b, serve(b, api)), ns, &logs)
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
