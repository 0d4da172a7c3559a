// Package proctest helps tests that run fabricmap's binaries as processes: a safe place for their output, and
// their peak memory, CPU time and children from /proc.
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
	"time"
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

// RSSKiB is the process's resident set size now, in KiB, as /proc/PID/status splits it: anonymous memory (a Go
// program's heap, stacks and runtime) and mapped files (its executable's pages).
func RSSKiB(pid int) (anon, file float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		for _, f := range []struct {
			key string
			to  *float64
		}{{"RssAnon:", &anon}, {"RssFile:", &file}} {
			if v, ok := strings.CutPrefix(line, f.key); ok {
				kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				if err != nil {
					return 0, 0, fmt.Errorf("%s of process %d: %w", f.key, pid, err)
				}
				*f.to = kb
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("no RssAnon and RssFile in /proc/%d/status", pid)
	}
	return anon, file, nil
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

// CPUTime is the process's user plus system time so far, from /proc/PID/stat.
func CPUTime(pid int) (time.Duration, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// statFields starts at field 3 (state): utime and stime are fields 14 and 15.
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime/stime of process %d: %q %q", pid, fields[11], fields[12])
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// ChildPID is the pid of this process's child whose command name (comm) is comm: the kube-apiserver or etcd
// a test environment started, say.
func ChildPID(comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone meanwhile
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open || string(data[open+1:end]) != comm {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s among this process's children", comm)
}

// statFields are the fields of /proc/PID/stat after the command name (which may hold spaces and
// parentheses): the process state first.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 13", pid, len(fields))
	}
	return fields, nil
}

// ChildCPUTime is the CPU time so far of this process's child whose command name is comm (ChildPID).
func ChildCPUTime(comm string) (time.Duration, error) {
	pid, err := ChildPID(comm)
	if err != nil {
		return 0, err
	}
	return CPUTime(pid)
}
