package e2e

import (
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
)

// rssSplit samples a process's resident memory every second, split as the kernel counts it: the peak of its
// anonymous memory (a Go program's heap, stacks and runtime: what GOMEMLIMIT bounds) and of its mapped files
// (the executable's pages, which the runtime does not count and a container's limit does).
type rssSplit struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	anon float64 // KiB
	file float64 // KiB
}

// sampleRSS starts sampling pid until halt.
func sampleRSS(pid int) *rssSplit {
	s := &rssSplit{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if anon, file, err := proctest.RSSKiB(pid); err == nil {
				s.mu.Lock()
				s.anon, s.file = max(s.anon, anon), max(s.file, file)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// halt stops the sampling and returns the peaks in MiB.
func (s *rssSplit) halt() (anonMiB, fileMiB float64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anon / 1024, s.file / 1024
}
