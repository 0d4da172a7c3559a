package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
)

// figures are what one run of the convergence bench measured.
type figures struct {
	hosts, domains, movedNodes int
	load, cold, moved          time.Duration
	// firstWrite is the time from the aggregator's start to its first write seen.
	firstWrite time.Duration

	heartbeatsPerS, heartbeatTarget float64
	heartbeatFailures, renewedQuiet int64
	heartbeatsLate                  int64
	heartbeatErr                    error

	labelsPerNode float64
	// coldCounters are the aggregator's own counts of its writes by kind once cold; sentBeyond those beyond
	// one per object by kind (a write that changed nothing still counts there).
	coldCounters map[string]float64
	sentBeyond   float64
	// beyond are the writes per object beyond what each needs (watched), cold and after the move.
	beyond, coldBeyond                  int
	coldObjectWrites, movedObjectWrites int

	steady, quietReconciles float64

	movedApplies, movedStatus, movedLabels, rebuilds, rebuildSeconds float64

	rss, apiRSS, etcdRSS, etcdFsyncs float64
	// rssAnon and rssFile are the aggregator's peaks (sampled each second, MiB) of anonymous memory and of mapped
	// files (rssSplit).
	rssAnon, rssFile float64
	// coldCPU and movedCPU are the CPU seconds the API server, etcd and the aggregator used in those phases.
	coldCPU, movedCPU phaseCPU
	// relists is how many times the bench's watch listed a kind again (observer.relist).
	relists int

	// apfDispatched, apfRejected and apfWait are the aggregator's requests in its priority level: served,
	// refused, and their mean wait in its queues (s).
	apfDispatched, apfRejected, apfWait float64
}

// print writes the figures as a table, each with the target for the size (targetsFor).
func (f figures) print() {
	targets, judged := targetsFor(f.hosts)
	row := func(what string, v float64, unit string, target float64) {
		switch {
		case !judged || target < 0:
			fmt.Printf("%-52s %12.1f %-4s %10s\n", what, v, unit, "—")
		case target == 0:
			fmt.Printf("%-52s %12.1f %-4s %10.0f  %s\n", what, v, unit, target, verdict(v == 0))
		default:
			fmt.Printf("%-52s %12.1f %-4s %10.0f  ratio %.2f %s\n", what, v, unit, target, v/target, verdict(v <= target))
		}
	}
	fmt.Printf("\n== aggregator at %d nodes, %d HyperNodes, 4 tiers ==\n", f.hosts, f.domains)
	if judged {
		fmt.Printf("(targets for up to %d nodes)\n", targets.upTo)
	} else {
		fmt.Printf("(no targets above 100,032 nodes)\n")
	}
	fmt.Printf("%-52s %17s %10s\n", "what", "measured", "target")
	row("load: Nodes, status, reports, first heartbeats", f.load.Seconds(), "s", -1)
	row("heartbeats during cold convergence (achieved)", f.heartbeatsPerS, "/s", -1)
	row("  heartbeats the agents send (target rate)", f.heartbeatTarget, "/s", -1)
	row("  heartbeats that failed", float64(f.heartbeatFailures), "", -1)
	row("  heartbeats late (the last still on its way, or no worker free)", float64(f.heartbeatsLate), "", -1)
	if f.heartbeatsPerS < 0.95*f.heartbeatTarget {
		fmt.Printf("  the heartbeat load fell behind its rate: %.0f of %.0f/s\n", f.heartbeatsPerS, f.heartbeatTarget)
	}
	if f.heartbeatErr != nil {
		fmt.Printf("  last heartbeat error: %v\n", f.heartbeatErr)
	}
	row("cold start to every HyperNode, status and label", f.cold.Seconds(), "s", targets.cold.Seconds())
	row("  first write seen after", f.firstWrite.Seconds(), "s", -1)
	f.coldCPU.rows(row, f.cold)
	row("  writes: HyperNode applies", f.coldCounters["apply"], "", -1)
	row("  writes: HyperNode status", f.coldCounters["status"], "", -1)
	row("  writes: node labels", f.coldCounters["node-labels"], "", -1)
	row("  writes seen on HyperNodes and Nodes", float64(f.coldObjectWrites), "", -1)
	row("  labels the aggregator owns per node", f.labelsPerNode, "", -1)
	row("  writes sent beyond one per object (by kind)", f.sentBeyond, "", -1)
	row("writes in a quiet 10 s after", f.steady, "", 0)
	row("  heartbeat Lease renewals in it", float64(f.renewedQuiet), "", -1)
	row("  tree rebuilds (reconciles) in it", f.quietReconciles, "", -1)
	row(fmt.Sprintf("%d nodes (1 %%) moved: time to converge", f.movedNodes), f.moved.Seconds(), "s", targets.moved.Seconds())
	row("  HyperNode applies for it", f.movedApplies, "", -1)
	row("  HyperNode status writes for it", f.movedStatus, "", -1)
	row("  node-label writes for it", f.movedLabels, "", -1)
	row("  writes seen on HyperNodes and Nodes", float64(f.movedObjectWrites), "", -1)
	row(fmt.Sprintf("  tree rebuilds for it (%.1f s in them)", f.rebuildSeconds), f.rebuilds, "", -1)
	f.movedCPU.rows(row, f.moved)
	row("writes beyond one per object (cold and moved)", float64(f.beyond), "", 0)
	row("  the bench's watch listed again (a version expired; writes in a gap count once)", float64(f.relists), "", -1)
	row("aggregator peak RSS", f.rss, "MiB", targets.aggregatorRSSMi)
	row("  peak anonymous (heap, stacks, runtime), sampled", f.rssAnon, "MiB", -1)
	row("  peak mapped files (the binary's pages), sampled", f.rssFile, "MiB", -1)
	row("kube-apiserver peak RSS", f.apiRSS, "MiB", -1)
	row("etcd peak RSS", f.etcdRSS, "MiB", -1)
	row("etcd WAL fsyncs (etcd runs with fsync)", f.etcdFsyncs, "", -1)
	row("aggregator requests served in its priority level", f.apfDispatched, "", -1)
	row("  refused by priority and fairness (429)", f.apfRejected, "", -1)
	row("  mean wait in its queues", f.apfWait*1000, "ms", -1)
}

// report reports the figures as the benchmark's metrics, and the targets for the size, so that hack/bench.sh
// judges every size by the one table (targetsFor).
func (f figures) report(b *testing.B) {
	for _, m := range []struct {
		v    float64
		unit string
	}{
		{float64(f.hosts), "nodes"},
		{f.load.Seconds(), "load-s"},
		{f.cold.Seconds(), "cold-converge-s"},
		{f.moved.Seconds(), "moved-converge-s"},
		{f.rss, "peak-RSS-MiB"},
		{f.heartbeatsPerS, "heartbeats-per-s"},
		{f.heartbeatTarget, "heartbeats-target-per-s"},
		{float64(f.heartbeatFailures), "heartbeat-failures"},
		{float64(f.heartbeatsLate), "heartbeats-late"},
		{f.labelsPerNode, "node-labels-per-node"},
		{f.steady, "steady-writes"},
		{f.quietReconciles, "steady-reconciles"},
		{float64(f.beyond), "writes-beyond-one"},
		{f.sentBeyond, "writes-sent-beyond-one"},
		{f.coldCounters["apply"], "cold-applies"},
		{f.coldCounters["status"], "cold-status-writes"},
		{f.coldCounters["node-labels"], "cold-label-writes"},
		{f.apiRSS, "apiserver-peak-RSS-MiB"},
		{f.etcdRSS, "etcd-peak-RSS-MiB"},
		{f.apfRejected, "apf-rejected"},
	} {
		b.ReportMetric(m.v, m.unit)
	}
	if t, judged := targetsFor(f.hosts); judged {
		b.ReportMetric(t.cold.Seconds(), "cold-target-s")
		b.ReportMetric(t.moved.Seconds(), "moved-target-s")
		b.ReportMetric(t.aggregatorRSSMi, "RSS-target-MiB")
	}
}

// verdict says whether a figure meets its target, as hack/bench.sh does.
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT MET"
}

// controlPlaneFigures are the peak RSS (VmHWM) of the kube-apiserver serving host and of its etcd, and how
// often that etcd has synced its write-ahead log. Both run as children of this test binary (testenv starts
// them), beside those of the package's shared control plane: the API server is the one whose --secure-port is
// host's, etcd the one listening where that API server's --etcd-servers point.
func controlPlaneFigures(b *testing.B, host string) (apiserver, etcd, fsyncs float64) {
	b.Helper()
	apiPID, etcdPID, etcdURL := controlPlanePIDs(b, host)
	fsyncs, _, err := proctest.Metric(etcdURL+"/metrics", "etcd_disk_wal_fsync_duration_seconds_count")
	if err != nil {
		b.Fatalf("etcd's metrics: %v", err)
	}
	return peakRSSMiB(b, apiPID), peakRSSMiB(b, etcdPID), fsyncs
}

// controlPlanePIDs are the kube-apiserver serving host and its etcd (controlPlaneFigures), and etcd's URL.
func controlPlanePIDs(b *testing.B, host string) (apiPID, etcdPID int, etcdURL string) {
	b.Helper()
	u, err := url.Parse(host)
	if err != nil {
		b.Fatal(err)
	}
	children := childCommandLines(b)
	for pid, args := range children {
		if filepath.Base(args[0]) == "kube-apiserver" && flagValue(args, "secure-port") == u.Port() {
			apiPID, etcdURL = pid, flagValue(args, "etcd-servers")
		}
	}
	for pid, args := range children {
		if filepath.Base(args[0]) == "etcd" && etcdURL != "" && flagValue(args, "listen-client-urls") == etcdURL {
			etcdPID = pid
		}
	}
	if apiPID == 0 || etcdPID == 0 {
		b.Fatalf("no kube-apiserver serving %s (pid %d) and its etcd %q (pid %d) among this test's child processes", host, apiPID, etcdURL, etcdPID)
	}
	return apiPID, etcdPID, etcdURL
}

// cpuClock reads the CPU time of the processes that share the machine in a phase: the API server, etcd and
// the aggregator.
type cpuClock struct {
	pids [3]int // kube-apiserver, etcd, aggregator
}

// phaseCPU is the CPU seconds each process of a cpuClock used in a phase.
type phaseCPU struct{ apiserver, etcd, aggregator float64 }

// read is the CPU time so far of each process, in seconds.
func (c cpuClock) read(b *testing.B) phaseCPU {
	b.Helper()
	var v [3]float64
	for i, pid := range c.pids {
		d, err := proctest.CPUTime(pid)
		if err != nil {
			b.Fatalf("CPU time of process %d: %v", pid, err)
		}
		v[i] = d.Seconds()
	}
	return phaseCPU{v[0], v[1], v[2]}
}

// since is the CPU used from start to c's processes' present.
func (p phaseCPU) since(start phaseCPU) phaseCPU {
	return phaseCPU{p.apiserver - start.apiserver, p.etcd - start.etcd, p.aggregator - start.aggregator}
}

// childCommandLines are the command lines of this process's children, by pid.
func childCommandLines(b *testing.B) map[int][]string {
	b.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	out := map[int][]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid != os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		out[pid] = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	}
	return out
}

// flagValue is the value of --name=value (or --name value) in args; empty when absent.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// sumWrites is the sum of every kind of the aggregator's fabricmap_aggregator_writes_total at url.
func sumWrites(url string) float64 {
	resp, err := http.Get(url) //nolint:gosec,noctx // the bench's own aggregator on 127.0.0.1
	if err != nil {
		return 0
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end below
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "fabricmap_aggregator_writes_total{") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			total += v
		}
	}
	return total
}

// peakRSSMiB is the process's peak resident set size (VmHWM) in MiB.
func peakRSSMiB(b *testing.B, pid int) float64 {
	b.Helper()
	kb, err := proctest.PeakRSSKiB(pid)
	if err != nil {
		b.Fatal(err)
	}
	return kb / 1024
}

// fetchTo saves what url answers into file.
func fetchTo(url, file string) error {
	resp, err := http.Get(url) //nolint:gosec,noctx // the bench's own aggregator on 127.0.0.1
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end below
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// rows prints the CPU a phase of length d took, with each process's share of the machine's cores.
func (p phaseCPU) rows(row func(what string, v float64, unit string, target float64), d time.Duration) {
	cores := func(cpu float64) float64 { return cpu / max(d.Seconds(), 1e-9) }
	row(fmt.Sprintf("  CPU of kube-apiserver in it (%.2f cores)", cores(p.apiserver)), p.apiserver, "s", -1)
	row(fmt.Sprintf("  CPU of etcd in it (%.2f cores)", cores(p.etcd)), p.etcd, "s", -1)
	row(fmt.Sprintf("  CPU of the aggregator in it (%.2f cores)", cores(p.aggregator)), p.aggregator, "s", -1)
}
