package aggregator

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A hostile capture (switch records naming new CAs with 65,000-byte descriptions, 446 KB gzipped: it took the
// aggregator to 1.2 GB of heap) is refused as it is read, as a partial one is held back: the HyperNodes stay
// those of the last good capture, the source is stale and its errors counted, and one Warning Event on the
// leader Lease names the limit, however many polls find it.
func TestOverLimitCaptureIsRefused(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	complete, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "ib/testdata/superpod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var hostile bytes.Buffer
	zw := gzip.NewWriter(&hostile)
	if err := ibtest.SwitchesNamingCAs(65_000, 64<<20).Write(zw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(file, complete, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	var events eventLog
	r.Events = &events
	r.Config.DeletionGuard = &DeletionGuard{Lease: types.NamespacedName{Namespace: "default", Name: "fabricmap-aggregator"}}
	r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}
	reconcileOnce(t, r)
	want := hyperNodes(t)
	if len(want) == 0 {
		t.Fatal("no HyperNodes from the complete capture")
	}
	poll := func(content []byte) {
		t.Helper()
		if content != nil {
			if err := os.WriteFile(file, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		clock.t = clock.t.Add(time.Minute)
		reconcileOnce(t, r)
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r)
	}
	before := writes(r)
	poll(hostile.Bytes())
	poll(nil) // the same capture, polled again
	if got := hyperNodes(t); !equal(got, want) || writes(r) != before {
		t.Fatalf("a refused capture changed the HyperNodes: %v", got)
	}
	if v := gaugeValue(t, r.Metrics.sourceStale.WithLabelValues(ibfabric.Name)); v != 1 {
		t.Errorf("source stale = %v, want 1 while the capture is refused", v)
	}
	if n := counterValue(r.Metrics.sourceErrors.WithLabelValues(ibfabric.Name)); n < 1 {
		t.Errorf("source errors counted = %v, want the refusals", n)
	}
	var said []string
	for _, e := range events {
		if strings.HasPrefix(e, "Lease/fabricmap-aggregator Warning "+ReasonCaptureOverLimit+": ") {
			said = append(said, e)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "source ibnetdiscover: fabric capture: "+file) ||
		!strings.Contains(said[0], "Limits.DescriptionBytes") || !strings.Contains(said[0], "the last good capture stays in use") {
		t.Errorf("Events on the Lease = %q, want one naming the capture, the limit and what stays in use", said)
	}
}
