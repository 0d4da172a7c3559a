package ibtest

import (
	"runtime/metrics"
	"sync"
	"time"
)

// heapMetrics are the two parts of the heap's spans in use (runtime.MemStats.HeapInuse): object bytes, live
// or not yet swept, and the free space inside spans that hold objects.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

// HeapSampler watches the heap in use from another goroutine, every 200 µs, without stopping the world, and
// keeps the largest figure seen: a benchmark's peak heap, to within what grows and shrinks between samples.
type HeapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

// StartHeapSampler starts sampling.
func StartHeapSampler() *HeapSampler {
	s := &HeapSampler{stop: make(chan struct{})}
	s.peak = heapInuse(make([]metrics.Sample, len(heapMetrics)))
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		samples := make([]metrics.Sample, len(heapMetrics))
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			s.peak = max(s.peak, heapInuse(samples))
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak heap in use, in bytes.
func (s *HeapSampler) Stop() uint64 {
	close(s.stop)
	s.done.Wait()
	return max(s.peak, heapInuse(make([]metrics.Sample, len(heapMetrics))))
}

func heapInuse(samples []metrics.Sample) uint64 {
	for i, name := range heapMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var n uint64
	for _, s := range samples {
		n += s.Value.Uint64()
	}
	return n
}
