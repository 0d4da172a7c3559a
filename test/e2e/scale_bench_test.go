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
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
	"github.com/fabricmap/fabricmap/topology"
)

// The load's fabric: DGX SuperPOD-like scalable units of 32 hosts behind 8 rail leaves, two NVLink domains of
// 16 hosts each per unit; 8 units share a group of 8 spines; 8 cores join the groups. With NVLink domains as
// the lowest tier that is four tiers: NVLink domain, unit, spine group, cores.
const (
	loadHosts       = 10_016
	loadHostsPerSU  = 32
	loadRails       = 8
	loadNVLinkHosts = 16
	loadSUsPerGroup = 8
	loadSpines      = 8
	loadCores       = 8
	loadSUs         = loadHosts / loadHostsPerSU
)

func loadLeafGUID(su, rail int) string { return fmt.Sprintf("b83fd2030a%06x", su*loadRails+rail) }
func loadSpineGUID(g, k int) string    { return fmt.Sprintf("b83fd2030b%06x", g*loadSpines+k) }
func loadCoreGUID(k int) string        { return fmt.Sprintf("b83fd2030c%06x", k) }

// loadReport is host h's report when it sits in scalable unit su.
func loadReport(h, su int) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: loadNode(h)}}
	r.Spec.GPUCount = 8
	r.Spec.NVLinkDomain = fmt.Sprintf("7f3c2a10-0000-4000-8000-%012x.%d", su, (h%loadHostsPerSU)/loadNVLinkHosts)
	for rail := range loadRails {
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{
			Source: v1alpha1.SourceIBNetDiscover, Interface: fmt.Sprintf("mlx5_%d/1", rail),
			ChassisID: "0x" + loadLeafGUID(su, rail), ChassisIDSubtype: "guid", PortID: strconv.Itoa(h%loadHostsPerSU + 1),
			SystemName: fmt.Sprintf("ib-su%03d-leaf-r%d", su, rail),
		})
	}
	return r
}

func loadNode(h int) string { return fmt.Sprintf("dgx-%05d", h) }

// loadUFM is what UFM answers for the load's switches and the cables between them (hosts are known from the
// reports).
func loadUFM() (systems []ufm.System, links []ufm.Link) {
	sw := func(guid, name string) {
		systems = append(systems, ufm.System{SystemGUID: guid, GUID: guid, Name: guid, SystemName: name, Type: "switch", Model: "MQM9700"})
	}
	cable := func(a string, ap int, b string, bp int) {
		links = append(links, ufm.Link{SourceGUID: a, SourcePort: strconv.Itoa(ap), DestinationGUID: b, DestinationPort: strconv.Itoa(bp),
			Name: fmt.Sprintf("%s_%d:%s_%d", a, ap, b, bp), Width: "4x"})
	}
	groups := (loadSUs + loadSUsPerGroup - 1) / loadSUsPerGroup
	for k := range loadCores {
		sw(loadCoreGUID(k), fmt.Sprintf("ib-core-%d", k))
	}
	for g := range groups {
		for k := range loadSpines {
			sw(loadSpineGUID(g, k), fmt.Sprintf("ib-g%02d-spine-%d", g, k))
			for c := range loadCores {
				cable(loadSpineGUID(g, k), 33+c, loadCoreGUID(c), g*loadSpines+k+1)
			}
		}
	}
	for su := range loadSUs {
		for rail := range loadRails {
			sw(loadLeafGUID(su, rail), fmt.Sprintf("ib-su%03d-leaf-r%d", su, rail))
			for k := range loadSpines {
				cable(loadLeafGUID(su, rail), 33+k, loadSpineGUID(su/loadSUsPerGroup, k), (su%loadSUsPerGroup)*loadRails+rail+1)
			}
		}
	}
	return systems, links
}

// expectedDomains is how many HyperNodes the load's evidence gives, by the same inference the aggregator runs.
func expectedDomains(reports []*v1alpha1.NodeFabricReport, systems []ufm.System, links []ufm.Link) int {
	in := topology.Input{}
	for _, r := range reports {
		in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(r))
	}
	u, _ := ufm.Evidence(&ufm.Fabric{Systems: systems, Links: links}, ufm.Options{})
	in.SwitchLinks = u.SwitchLinks
	t, _ := topology.Build(in, topology.BuildOptions{RootName: "fabric", AcceleratorDomains: true})
	return len(t.Domains)
}

// BenchmarkConverge10k loads 10,016 Nodes and NodeFabricReports of a four-tier fabric (UFM on 127.0.0.1 knows
// the switches) into the real API server, starts the real aggregator binary cold and measures: the time until
// every HyperNode and node label is written, the writes that took, the writes in a quiet 10 s after, the time
// and writes for 1 % of the nodes moving to other units, and the aggregator's peak RSS. Run it once:
// go test -run '^$' -bench Converge10k -benchtime 1x ./test/e2e/
func BenchmarkConverge10k(b *testing.B) {
	testenv.Require(b)
	ctx := context.Background()
	cfg := rest.CopyConfig(testenv.Shared.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	reports := make([]*v1alpha1.NodeFabricReport, loadHosts)
	for h := range reports {
		reports[h] = loadReport(h, h/loadHostsPerSU)
	}
	load := time.Now()
	parallel(b, loadHosts, func(h int) error {
		if err := c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: loadNode(h)}}); err != nil {
			return err
		}
		if err := c.Create(ctx, reports[h].DeepCopy()); err != nil {
			return err
		}
		return c.Create(ctx, heartbeatLease(h))
	})
	b.Logf("loaded %d Nodes, reports and heartbeat Leases in %v", loadHosts, time.Since(load).Round(time.Millisecond))

	systems, links := loadUFM()
	want := expectedDomains(reports, systems, links)
	answers := ufmtest.Answers{}
	// No ports: the load's UFM evidence needs only its switches and the cables between them.
	for name, v := range map[string]any{"systems": systems, "links": links, "ports": []ufm.Port{}} {
		if answers[name], err = json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(ufmtest.Handler("load", "load-pass", answers))
	defer srv.Close()
	dir := b.TempDir()
	for name, v := range map[string]string{"user": "load", "pass": "load-pass"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		b.Fatal(err)
	}
	metricsPort := freePort(b)
	agg := &aggregatorProc{metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	cmd := exec.Command(bin("fabricmap-aggregator"), "--kubeconfig", kc, "--leader-elect=false", "--accelerator-domains",
		"--heartbeat-namespace", metav1.NamespaceDefault,
		"--ufm-url", srv.URL, "--ufm-username-file", filepath.Join(dir, "user"), "--ufm-password-file", filepath.Join(dir, "pass"),
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", metricsPort), "--health-addr=0", "--web-addr=0", "--log-level=warn", "--log-format=text")
	p := &process{name: "aggregator", cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	defer p.stop(9)
	agg.process = p

	writes := func() map[string]float64 {
		out := map[string]float64{}
		for _, kind := range []string{"apply", "status", "delete", "node-labels"} {
			v, _ := metric(agg.metricsURL, fmt.Sprintf(`fabricmap_aggregator_writes_total{kind=%q}`, kind))
			out[kind] = v
		}
		return out
	}
	waitFor := func(what string, limit time.Duration, cond func(map[string]float64) bool) (time.Duration, map[string]float64) {
		t0 := time.Now()
		for {
			w := writes()
			if cond(w) {
				return time.Since(t0), w
			}
			select {
			case <-p.done:
				b.Fatalf("the aggregator stopped: %s", lastLines(p.output(), 20))
			default:
			}
			if time.Since(t0) > limit {
				b.Fatalf("%s: not within %v (writes %v)\n%s", what, limit, w, lastLines(p.output(), 20))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	_, cold := waitFor("cold convergence", 5*time.Minute, func(w map[string]float64) bool {
		return w["apply"] >= float64(want) && w["node-labels"] >= loadHosts
	})
	coldTime := time.Since(start)

	// The quiet 10 s are not silent: every agent renews its heartbeat Lease, at the default 2 min a renewal
	// each 12 ms for 10,016 nodes. They must cost the aggregator no write and no rebuild of the tree.
	reconciles := func() float64 {
		v, _ := metric(agg.metricsURL, "fabricmap_aggregator_reconcile_duration_seconds_count")
		return v
	}
	reconcilesBefore := reconciles()
	renewed := renewHeartbeats(b, c, 10*time.Second, 2*time.Minute)
	quiet := writes()
	steady := sum(quiet) - sum(cold)
	quietReconciles := reconciles() - reconcilesBefore

	// 1 %: a hundred hosts, one from each of a hundred units, move to the next unit's leaves.
	const moved = 100
	parallel(b, moved, func(i int) error {
		h := i*loadHostsPerSU*3 + 5
		var r v1alpha1.NodeFabricReport
		if err := c.Get(ctx, client.ObjectKey{Name: loadNode(h)}, &r); err != nil {
			return err
		}
		r.Spec = loadReport(h, (h/loadHostsPerSU+1)%loadSUs).Spec
		return c.Update(ctx, &r)
	})
	changeTime, changed := waitFor("convergence after 1 % moved", 5*time.Minute, func(w map[string]float64) bool {
		return w["node-labels"]-quiet["node-labels"] >= float64(moved)
	})
	rss := peakRSSMiB(b, cmd.Process.Pid)

	fmt.Printf("\n== aggregator at %d nodes, %d HyperNodes, 4 tiers ==\n", loadHosts, want)
	fmt.Printf("%-44s %12s %12s\n", "what", "measured", "target")
	fmt.Printf("%-44s %11.1fs %12s\n", "cold start to every HyperNode and label", coldTime.Seconds(), "60 s")
	fmt.Printf("%-44s %12.0f %12d\n", "writes for it (HyperNode applies)", cold["apply"], want)
	fmt.Printf("%-44s %12.0f %12d\n", "writes for it (HyperNode status)", cold["status"], want)
	fmt.Printf("%-44s %12.0f %12d\n", "writes for it (node labels)", cold["node-labels"], loadHosts)
	fmt.Printf("%-44s %12.0f %12d\n", "writes in a quiet 10 s after", steady, 0)
	fmt.Printf("%-44s %12d %12s\n", "  heartbeat Lease renewals in it", renewed, "—")
	fmt.Printf("%-44s %12.0f %12s\n", "  tree rebuilds (reconciles) in it", quietReconciles, "—")
	fmt.Printf("%-44s %11.1fs %12s\n", "1 % of nodes moved: time to converge", changeTime.Seconds(), "—")
	fmt.Printf("%-44s %12.0f %12s\n", "  HyperNode applies for it", changed["apply"]-quiet["apply"], "changed ones")
	fmt.Printf("%-44s %12.0f %12d\n", "  node-label writes for it", changed["node-labels"]-quiet["node-labels"], moved)
	fmt.Printf("%-44s %10.0f MiB %8s\n", "aggregator peak RSS", rss, "1024 MiB")
	for b.Loop() {
		// The measurement above is the benchmark; it runs once however b.N is chosen. The figures are reported
		// after the loop, which would otherwise reset them.
	}
	b.ReportMetric(coldTime.Seconds(), "cold-converge-s")
	b.ReportMetric(steady, "steady-writes")
	b.ReportMetric(quietReconciles, "steady-reconciles")
	b.ReportMetric(changeTime.Seconds(), "1pct-converge-s")
	b.ReportMetric(rss, "peak-RSS-MiB")
}

// heartbeatLease is node h's agent heartbeat Lease, as the agent writes it.
func heartbeatLease(h int) *coordinationv1.Lease {
	holder := loadNode(h)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.HeartbeatLeaseName(holder), Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr(int32(360)),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
}

// renewHeartbeats renews the load's heartbeat Leases for d, in turn, at the pace of agents renewing every
// interval, and returns how many renewals it made.
func renewHeartbeats(b *testing.B, c client.Client, d, interval time.Duration) int {
	b.Helper()
	tick := time.NewTicker(interval / loadHosts)
	defer tick.Stop()
	end := time.After(d)
	for n := 0; ; n++ {
		select {
		case <-end:
			return n
		case now := <-tick.C:
			l := heartbeatLease(n % loadHosts)
			patch := []byte(fmt.Sprintf(`{"spec":{"renewTime":%q}}`, now.UTC().Format(metav1.RFC3339Micro)))
			if err := c.Patch(context.Background(), l, client.RawPatch(types.MergePatchType, patch)); err != nil {
				b.Fatalf("renewing %s: %v", l.Name, err)
			}
		}
	}
}

// parallel runs fn(0..n-1) on 32 workers and fails b on the first error.
func parallel(b *testing.B, n int, fn func(int) error) {
	b.Helper()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
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
