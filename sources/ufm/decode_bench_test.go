package ufm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// hugeFabric is a two-tier, rail-optimised fabric of units scalable units, each of 32 hosts with 8 compute HCAs
// on the unit's 8 rail leaves, every leaf cabled to 8 spines: 640 ports per unit, about 0.8 MB of UFM's
// /resources/ports answer.
func hugeFabric(units int) *genFabric {
	g := newGenFabric()
	devices := []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"}
	var spines []*genNode
	for s := range 8 {
		spines = append(spines, g.oneUSwitch(fmt.Sprintf("ib-spine-%d", s+1), fmt.Sprintf("b83fd20302%06x", s), 2048))
	}
	for u := range units {
		var leaves []*genNode
		for r := range 8 {
			leaf := g.oneUSwitch(fmt.Sprintf("ib-su%03d-leaf-r%d", u+1, r+1), fmt.Sprintf("b83fd20301%03x%03x", u, r), 64)
			for s, sp := range spines {
				g.cable(leaf, 33+s, sp, u*8+r+1)
			}
			leaves = append(leaves, leaf)
		}
		for h := range 32 {
			host := g.host(fmt.Sprintf("dgx-%05d", u*32+h+1), fmt.Sprintf("946dae03%06x00", u*32+h+1), devices)
			for r, hca := range host {
				g.cable(hca, 1, leaves[r], h+1)
			}
		}
	}
	return g
}

// hugePortsAnswer is UFM's /resources/ports answer of a fabric at least minBytes long.
func hugePortsAnswer(tb testing.TB, minBytes int) []byte {
	tb.Helper()
	units := minBytes/(800<<10) + 1
	for {
		body, err := json.Marshal(hugeFabric(units).ports)
		if err != nil {
			tb.Fatal(err)
		}
		if len(body) >= minBytes {
			return body
		}
		units += units/4 + 1
	}
}

// heapPeak samples a heap figure while it runs: a cheap read of runtime/metrics, no stop of the world.
type heapPeak struct {
	sample func() uint64
	stop   chan struct{}
	done   sync.WaitGroup
	peak   uint64
}

// heapObjects is the bytes of heap objects, live and not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapInuse is the bytes of the heap's spans in use, runtime.MemStats.HeapInuse: the objects and the free
// room in their spans.
func heapInuse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// startHeapPeak samples heapObjects.
func startHeapPeak() *heapPeak { return startPeakOf(heapObjects) }

// startPeakOf samples sample every millisecond until end.
func startPeakOf(sample func() uint64) *heapPeak {
	h := &heapPeak{sample: sample, stop: make(chan struct{}), peak: sample()}
	h.done.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			h.peak = max(h.peak, h.sample())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	})
	return h
}

func (h *heapPeak) end() uint64 {
	close(h.stop)
	h.done.Wait()
	return max(h.peak, h.sample())
}

// BenchmarkDecodeHugePortsAnswer reads a generated /resources/ports answer of 100 MB from a UFM on 127.0.0.1
// through the client. Reported: the peak heap above what was in use before (the server's copy of the answer
// included in neither), and the bytes allocated per read. Target: peak heap at most 300 MiB, well under the
// aggregator's 1 GiB memory limit.
func BenchmarkDecodeHugePortsAnswer(b *testing.B) {
	body := hugePortsAnswer(b, 100<<20)
	ufm := newFakeUFM(nil, "")
	ufm.override[EndpointPorts] = body
	srv := httptest.NewServer(ufm)
	defer srv.Close()
	var logs logBuffer
	c, err := NewClient(Config{BaseURL: srv.URL, Username: testUser, Password: testPassword, Logger: logs.logger()})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var peak, allocs uint64
	ports := 0
	for b.Loop() {
		runtime.GC()
		base := heapObjects()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		h := startHeapPeak()
		got, err := c.Ports(context.Background())
		top := h.end()
		if err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		peak = max(peak, top-min(top, base))
		allocs = max(allocs, after.TotalAlloc-before.TotalAlloc)
		ports = len(got)
		runtime.KeepAlive(got)
	}
	if want := len(hugeFabric(0).ports); ports <= want {
		b.Fatalf("%d ports read", ports)
	}
	b.ReportMetric(float64(len(body))/(1<<20), "answer-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(allocs)/(1<<20), "alloc-MiB/op")
}
