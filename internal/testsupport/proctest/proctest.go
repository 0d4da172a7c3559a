// Package proctest helps tests that run fabricmap's binaries as processes: a safe place for their output and
// their peak memory from /proc.
package proctest

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Output collects what a process writes, safe for the concurrent writes of its stdout and stderr and for
// reading while it runs. The zero value is ready to use.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// PeakRSSKiB is the process's peak resident set size (VmHWM) in KiB.
func PeakRSSKiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM of process %d: %w", pid, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// Metric reads one sample of the Prometheus text exposition at url: the line of sample, the metric name with
// exactly its labels as exposed (e.g. `fabricmap_aggregator_writes_total{kind="apply"}`). found is false when
// the exposition has no such line.
func Metric(url, sample string) (value float64, found bool, err error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a test's local server
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			value, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return value, err == nil, err
		}
	}
	return 0, false, sc.Err()
}
