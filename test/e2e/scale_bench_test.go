package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
)

// BenchmarkConverge10k is the convergence bench of `make bench` at 10,016 nodes (see convergeBench). Run it
// once: go test -run '^$' -bench Converge10k -benchtime 1x ./test/e2e/
func BenchmarkConverge10k(b *testing.B) { convergeBench(b, 10_016) }

// BenchmarkConvergeScale is the convergence bench at FABRICMAP_BENCH_NODES nodes (rounded up to whole
// scalable units of 32, at least two so that 1 % can move between them; 50,016 when unset): `make bench-scale
// NODES=50000`. At 50,016 nodes it takes several minutes and about 4 GiB for the API server.
func BenchmarkConvergeScale(b *testing.B) {
	nodes := 50_016
	if v := os.Getenv(benchNodesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= loadHostsPerSU {
			b.Fatalf("%s=%q: want a node count above %d (two scalable units, for nodes to move between)", benchNodesEnv, v, loadHostsPerSU)
		}
		nodes = n
	}
	convergeBench(b, (nodes+loadHostsPerSU-1)/loadHostsPerSU*loadHostsPerSU)
}

// benchNodesEnv sets BenchmarkConvergeScale's node count.
const benchNodesEnv = "FABRICMAP_BENCH_NODES"

// convergeTargets are issue 40's targets for a cluster size: cold convergence, convergence after 1 % of the
// nodes moved and the aggregator's peak RSS.
type convergeTargets struct {
	upTo            int // the largest node count they hold for
	cold, moved     time.Duration
	aggregatorRSSMi float64
}

// targetsFor are the targets a load of hosts nodes is judged by: those of the smallest size at or above it.
// The largest is issue 40's 100,016 nodes, which the load rounds up to whole scalable units: 100,032. Above
// it there are none (ok false), and hack/bench.sh fails such a run.
func targetsFor(hosts int) (convergeTargets, bool) {
	for _, t := range []convergeTargets{
		{upTo: 10_016, cold: 60 * time.Second, moved: 10 * time.Second, aggregatorRSSMi: 512},
		{upTo: 50_016, cold: 120 * time.Second, moved: 10 * time.Second, aggregatorRSSMi: 512},
		{upTo: 100_032, cold: 300 * time.Second, moved: 20 * time.Second, aggregatorRSSMi: 1024},
	} {
		if hosts <= t.upTo {
			return t, true
		}
	}
	return convergeTargets{}, false
}

// The writes an object needs in a phase (cold start, or 1 % moved): a HyperNode its apply and its status, a
// Node its labels. Any more is a write beyond one.
var writesNeeded = map[string]int{"HyperNode": 2, "Node": 1}

// convergeBench runs a cluster of hosts GPU nodes on the bench's own control plane (etcd with fsync) and the
// real aggregator binary under the chart's service account, RBAC and priority level, with the chart's
// arguments and memory limit. It loads hosts Nodes shaped like GPU nodes (labels of NFD and GPU feature
// discovery, a kubelet's status), their NodeFabricReports of a four-tier fabric (UFM on 127.0.0.1 knows the
// switches) and the agents' heartbeat Leases, then renews the Leases as the agents do, N per heartbeat
// interval, from before the aggregator starts to the end. It measures: the time from the aggregator's start
// until the HyperNodes, their status and the node labels are what the evidence gives (watched, as a
// controller would, and judged against the same inference); the writes per object beyond what each needs; the
// writes in a quiet 10 s after; the same time and writes for 1 % of the nodes moving to other units; the
// heartbeats achieved; the peak RSS of the aggregator, the API server and etcd. It prints them with the
// targets for the size (targetsFor) and reports them, and the targets, as the benchmark's metrics, which
// hack/bench.sh judges.
func convergeBench(b *testing.B, hosts int) {
	requireMemory(b, hosts)
	bc := startBenchCluster(b)
	values := readChartValues(b)
	c := bc.admin
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sus := hosts / loadHostsPerSU

	hbClient, err := agent.NewReportClient(bc.agents)
	if err != nil {
		b.Fatal(err)
	}
	hb := newHeartbeats(hbClient, namespace, values.Agent.HeartbeatInterval.Duration, hosts)
	reports := loadReports(hosts, nil)
	load := time.Now()
	parallel(b, hosts, func(h int) error {
		n := loadNodeObject(h)
		if err := c.Create(ctx, n); err != nil {
			return fmt.Errorf("creating Node %s: %w", n.Name, err)
		}
		n.Status = loadNodeStatus(h)
		if err := c.Status().Update(ctx, n); err != nil {
			return fmt.Errorf("writing the status of Node %s: %w", n.Name, err)
		}
		hb.nodes[h], hb.uids[h] = n.Name, n.UID
		if err := c.Create(ctx, reports[h].DeepCopy()); err != nil {
			return fmt.Errorf("creating report %s: %w", n.Name, err)
		}
		return nil
	})
	// The agents' first heartbeats create their Leases, last, so that none is older than the rest of the load
	// when the renewals start (the aggregator expires a report whose Lease goes unrenewed --report-expiry).
	parallel(b, hosts, func(h int) error { return hb.beat(ctx, h) })
	loadTime := time.Since(load)
	b.Logf("loaded %d GPU Nodes (%d labels, %d images each) with their status, reports and heartbeat Leases in %v",
		hosts, len(loadNodeLabels(0)), len(loadImages), loadTime.Round(time.Millisecond))
	apiLoad, etcdLoad, _ := controlPlaneFigures(b, bc.env.Config.Host)
	b.Logf("peak RSS by the end of the load: kube-apiserver %.0f MiB, etcd %.0f MiB", apiLoad, etcdLoad)

	systems, links := loadUFM(sus)
	cold := expect(b, reports, systems, links, bc.labelKeys)
	reports = nil // the API server has them: the load generator need not keep them beside the aggregator
	b.Logf("the evidence gives %d HyperNodes (%s)", cold.domains, describeShape(cold))
	ufmURL, ufmArgs := serveLoadUFM(b, systems, links)

	hb.start()
	defer hb.halt()
	o := watchObjects(ctx, b, c)

	metricsPort, pprofPort := freePort(b), freePort(b)
	// FABRICMAP_BENCH_PROFILE=DIR keeps the aggregator's heap profile once converged (heap-cold.pb.gz) and its
	// CPU profile while 1 % of the nodes move (cpu-1pct.pb.gz), for `go tool pprof -top`.
	profileDir := os.Getenv("FABRICMAP_BENCH_PROFILE")
	profile := func(path, file string) {
		if profileDir == "" {
			return
		}
		if err := fetchTo(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", pprofPort, path), filepath.Join(profileDir, file)); err != nil {
			b.Logf("profile %s: %v", file, err)
		}
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	cmd := exec.Command(bin("fabricmap-aggregator"), bc.aggregatorArgsWith(append(ufmArgs, "--ufm-url", ufmURL,
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", metricsPort), "--health-addr=0", "--web-addr=0", "--log-format=text",
		fmt.Sprintf("--pprof-addr=127.0.0.1:%d", pprofPort))...)...)
	// As the Deployment runs it: its namespace, and the Go soft memory limit the chart's default memory limit
	// gives it (memlimit.Set in its container).
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+namespace, "GOMEMLIMIT="+strconv.FormatInt(values.softLimit(b, bin("fabricmap-aggregator")), 10))
	p := &process{name: "aggregator", cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	hbBefore := hb.sent.Load()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	defer p.stop(9)
	split := sampleRSS(cmd.Process.Pid)
	apiPID, etcdPID, _ := controlPlanePIDs(b, bc.env.Config.Host)
	clock := cpuClock{pids: [3]int{apiPID, etcdPID, cmd.Process.Pid}}
	coldCPUStart := clock.read(b)
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("--- the aggregator's output ---\n%s", lastLines(p.output(), 40))
		}
	})
	alive := func() {
		select {
		case <-p.done:
			b.Fatalf("the aggregator stopped: %s", lastLines(p.output(), 20))
		default:
		}
	}
	counters := func() map[string]float64 {
		out := map[string]float64{}
		for _, kind := range []string{"apply", "status", "delete", "node-labels"} {
			v, _ := metric(metricsURL, fmt.Sprintf(`fabricmap_aggregator_writes_total{kind=%q}`, kind))
			out[kind] = v
		}
		return out
	}
	allWrites := func() float64 { return sumWrites(metricsURL) }
	// A limit well above any target (5 minutes a 10,000 nodes): past it the bench fails rather than waits.
	limit := time.Duration(max(1, hosts/10_000)) * 5 * time.Minute

	coldDone := awaitOutputs(b, o, cold, "cold convergence", limit, alive)
	coldTime := coldDone.Sub(start)
	coldCPU := clock.read(b).since(coldCPUStart)
	firstWrite := o.firstWrite().Sub(start)
	hbRate := heartbeatRate(hbBefore, hb.sent.Load(), time.Since(start))
	settle(o, allWrites, time.Minute)
	coldWrites := o.phase()
	coldCounters := counters()
	sentBeyond := (coldCounters["apply"] - float64(cold.domains)) + (coldCounters["status"] - float64(cold.domains)) +
		(coldCounters["node-labels"] - float64(hosts)) + coldCounters["delete"]
	st, err := o.snapshot()
	if err != nil {
		b.Fatal(err)
	}
	labelsPer := labelsPerNode(st)
	profile("heap?gc=1", "heap-cold.pb.gz")

	// A quiet 10 s, under the agents' heartbeats: they must cost the aggregator no write and no rebuild.
	reconciles := func() float64 {
		v, _ := metric(metricsURL, "fabricmap_aggregator_reconcile_duration_seconds_count")
		return v
	}
	reconcilesBefore, quietBefore, hbQuiet := reconciles(), allWrites(), hb.sent.Load()
	time.Sleep(10 * time.Second)
	renewed := hb.sent.Load() - hbQuiet
	steady := max(allWrites()-quietBefore, float64(total(o.phase())))
	quietReconciles := reconciles() - reconcilesBefore

	// 1 %: one host in every third unit moves to the next unit's leaves.
	moves := loadMoves(hosts)
	movedReports := loadReports(hosts, moves)
	after := expect(b, movedReports, systems, links, bc.labelKeys)
	movedReports = nil
	cpuDone := make(chan struct{})
	go func() { defer close(cpuDone); profile("profile?seconds=20", "cpu-1pct.pb.gz") }()
	passesBefore := reconciles()
	passSecondsBefore, _ := metric(metricsURL, "fabricmap_aggregator_reconcile_duration_seconds_sum")
	beforeMove := counters()
	movedNodes := make([]int, 0, len(moves))
	for h := range moves {
		movedNodes = append(movedNodes, h)
	}
	moveStart := time.Now()
	movedCPUStart := clock.read(b)
	parallel(b, len(movedNodes), func(i int) error {
		h := movedNodes[i]
		var r v1alpha1.NodeFabricReport
		if err := c.Get(ctx, client.ObjectKey{Name: loadNode(h)}, &r); err != nil {
			return err
		}
		r.Spec = loadReport(h, moves[h]).Spec
		return c.Update(ctx, &r)
	})
	movedDone := awaitOutputs(b, o, after, "convergence after 1 % moved", limit, alive)
	changeTime := movedDone.Sub(moveStart)
	movedCPU := clock.read(b).since(movedCPUStart)
	settle(o, allWrites, time.Minute)
	movedWrites := o.phase()
	changed := counters()
	passSeconds, _ := metric(metricsURL, "fabricmap_aggregator_reconcile_duration_seconds_sum")
	rebuilds := reconciles() - passesBefore
	if profileDir != "" {
		<-cpuDone
	}
	hb.halt()
	rss := peakRSSMiB(b, cmd.Process.Pid)
	rssAnon, rssFile := split.halt()
	apiRSS, etcdRSS, fsyncs := controlPlaneFigures(b, bc.env.Config.Host)
	apfDispatched, apfRejected, apfWait := bc.flowControl(b)

	f := figures{
		hosts: hosts, domains: cold.domains, load: loadTime, cold: coldTime, moved: changeTime, movedNodes: len(moves),
		heartbeatsPerS: hbRate, heartbeatTarget: hb.targetPerSecond(), heartbeatFailures: hb.failed.Load(),
		heartbeatErr: hb.err(), renewedQuiet: renewed, heartbeatsLate: hb.late.Load(), labelsPerNode: labelsPer,
		coldCounters: coldCounters, sentBeyond: sentBeyond,
		beyond: beyond(coldWrites, writesNeeded) + beyond(movedWrites, writesNeeded), coldBeyond: beyond(coldWrites, writesNeeded),
		coldObjectWrites: total(coldWrites), movedObjectWrites: total(movedWrites),
		steady: steady, quietReconciles: quietReconciles,
		movedApplies: changed["apply"] - beforeMove["apply"], movedStatus: changed["status"] - beforeMove["status"],
		movedLabels: changed["node-labels"] - beforeMove["node-labels"], rebuilds: rebuilds, rebuildSeconds: passSeconds - passSecondsBefore,
		rss: rss, rssAnon: rssAnon, rssFile: rssFile, coldCPU: coldCPU, movedCPU: movedCPU, relists: o.relisted(), apiRSS: apiRSS, etcdRSS: etcdRSS, etcdFsyncs: fsyncs, firstWrite: firstWrite,
		apfDispatched: apfDispatched, apfRejected: apfRejected, apfWait: apfWait,
	}
	f.print()
	for b.Loop() {
		// The measurement above is the benchmark; it runs once however b.N is chosen. The figures are reported
		// after the loop, which would otherwise reset them.
	}
	f.report(b)
}

// serveLoadUFM serves UFM's answers for the load's switches and cables on 127.0.0.1 until the bench ends, and
// returns its URL and the aggregator's flags for its credentials.
func serveLoadUFM(b *testing.B, systems []ufm.System, links []ufm.Link) (string, []string) {
	b.Helper()
	answers := ufmtest.Answers{}
	// No ports: the load's UFM evidence needs only its switches and the cables between them.
	for name, v := range map[string]any{"systems": systems, "links": links, "ports": []ufm.Port{}} {
		var err error
		if answers[name], err = json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(ufmtest.Handler("load", "load-pass", answers))
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	for name, v := range map[string]string{"user": "load", "pass": "load-pass"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return srv.URL, []string{"--ufm-username-file", filepath.Join(dir, "user"), "--ufm-password-file", filepath.Join(dir, "pass")}
}

// apiServerKiBPerNode is the API server's peak memory per GPU-shaped node at 50,016 nodes (issue 40's run:
// 18,361 MiB), and benchOverheadMiB what the aggregator, etcd's own heap and this test take besides (etcd's
// larger RSS, 3.4 GiB there, is mostly its database mapped from the page cache, which the kernel reclaims; the
// machine's use peaked at 19 GiB in all).
const (
	apiServerKiBPerNode = 376
	benchOverheadMiB    = 1024
)

// requireMemory fails the bench at once, saying why, when hosts GPU-shaped nodes need more memory than this
// machine has available: the API server would be killed for want of memory an hour into the load instead.
func requireMemory(b *testing.B, hosts int) {
	b.Helper()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		b.Fatal(err)
	}
	mi, err := fs.Meminfo()
	if err != nil || mi.MemAvailable == nil {
		b.Fatalf("reading the memory available from /proc/meminfo: %v", err)
	}
	availMiB := float64(*mi.MemAvailable) / 1024
	needMiB := float64(hosts)*apiServerKiBPerNode/1024 + benchOverheadMiB
	if needMiB > availMiB {
		b.Fatalf("%d GPU-shaped nodes need about %.1f GiB (the API server %d KiB a node, as measured at 50,016, "+
			"and %d MiB besides); this machine has %.1f GiB available: not run here", hosts, needMiB/1024,
			apiServerKiBPerNode, benchOverheadMiB, availMiB/1024)
	}
}
