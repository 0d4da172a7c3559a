package lldp

import (
	"fmt"
	"sort"
	"sync"
)

// maxWarnings bounds the distinct warnings one Result carries; a switch sending a malformed frame every 30 s
// must not flood the report.
const maxWarnings = 20

// warningLog collects warnings between two reports, counting repeats. It is safe for concurrent use.
type warningLog struct {
	mu     sync.Mutex
	counts map[string]int
}

// add records one warning.
func (w *warningLog) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	w.counts[msg]++
}

// drain returns the warnings recorded since the last drain, sorted, repeats marked with their count, at most
// maxWarnings of them plus a line saying how many were left out.
func (w *warningLog) drain() []string {
	w.mu.Lock()
	counts := w.counts
	w.counts = nil
	w.mu.Unlock()

	msgs := make([]string, 0, len(counts))
	for msg := range counts {
		msgs = append(msgs, msg)
	}
	sort.Strings(msgs)
	var out []string
	for i, msg := range msgs {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("%d more distinct warnings left out", len(msgs)-maxWarnings))
			break
		}
		if c := counts[msg]; c > 1 {
			msg = fmt.Sprintf("%s (%d times)", msg, c)
		}
		out = append(out, msg)
	}
	return out
}
