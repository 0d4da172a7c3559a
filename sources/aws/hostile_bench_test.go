package aws

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/sources/aws/awstest"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// BenchmarkHostileCloudAnswers reads hostile EC2 answers through the source, the real SDK and its capped HTTP
// client, from the stand-in on 127.0.0.1: a page of 500 MB (streamed; refused at the body cap), a page just
// under the cap (decoded whole, then served again and again by a token that comes back), and a network node ID
// just under the cap (decoded, then refused by the string cap). Reported: the peak heap of one poll
// (peak-heap-MiB; the stand-in's copy of an answer it builds in memory included). Target: 256 MiB for the
// worst (hack/bench.sh), whatever the answer.
func BenchmarkHostileCloudAnswers(b *testing.B) {
	fixture := awstest.Fixture()
	nearCap := cloudsource.MaxBodyBytes - 64<<10
	for _, tc := range []struct {
		name  string
		setup func(*awstest.EC2)
	}{
		{"aws-500MB-page", func(e *awstest.EC2) { e.Pad(500 << 20) }},
		{"aws-page-under-the-cap-repeated", func(e *awstest.EC2) { e.Pad(nearCap); e.SetPageSize(2); e.RepeatTokens(true) }},
		{"aws-ID-under-the-cap", func(e *awstest.EC2) {
			in := awstest.Instances(fixture)
			in[0].NetworkNodes = []string{"nn-t1", strings.Repeat("n", nearCap), "nn-b1"}
			e.SetInstances(in...)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, url := standIn(b, awstest.Instances(fixture)...)
			tc.setup(e)
			s, _ := newSource(b, url, awstest.Nodes(fixture), nil)
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
