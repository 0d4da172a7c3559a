package agent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/rdma"
	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestCarryHealth(t *testing.T) {
	earlier, now := time.Unix(1_800_000_000, 0), time.Unix(1_800_003_600, 0)
	at := func(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }
	health := func(c v1alpha1.LinkCondition, reason, msg string) *v1alpha1.LinkHealth {
		return &v1alpha1.LinkHealth{Condition: c, Reason: reason, Message: msg}
	}
	prev := map[string]v1alpha1.LinkHealth{
		"mlx5_0/1": {Condition: v1alpha1.LinkDegraded, Reason: "SymbolErrors", Message: "symbol_error rose by 11 in 1m0s", Since: at(earlier)},
		"mlx5_1/1": {Condition: v1alpha1.LinkDegraded, Reason: "SymbolErrors", Message: "symbol_error rose by 11 in 1m0s", Since: at(earlier)},
		"mlx5_2/1": {Condition: v1alpha1.LinkHealthy, Since: at(earlier)},
	}
	probed := []v1alpha1.RDMADevice{
		{Name: "mlx5_0", Ports: []v1alpha1.RDMAPort{{Number: 1, Health: health(v1alpha1.LinkDegraded, "SymbolErrors", "symbol_error rose by 900 in 1h0m0s")}}},
		{Name: "mlx5_1", Ports: []v1alpha1.RDMAPort{{Number: 1, Health: health(v1alpha1.LinkDegraded, "LinkDowned", "link_downed rose by 1")}}},
		{Name: "mlx5_2", Ports: []v1alpha1.RDMAPort{{Number: 1, Health: health(v1alpha1.LinkDown, "PortDown", "state DOWN")}}},
		{Name: "mlx5_3", Ports: []v1alpha1.RDMAPort{{Number: 1, Health: health(v1alpha1.LinkHealthy, "", "")}, {Number: 2}}},
	}
	kept := probed[0].Ports[0].Health.DeepCopy()
	spec := v1alpha1.NodeFabricReportSpec{RDMADevices: append([]v1alpha1.RDMADevice(nil), probed...)}
	carryHealth(&spec, prev, now)
	got := linkHealthOf(&spec)
	want := map[string]v1alpha1.LinkHealth{
		// Same condition and reason: as published, figures of the day it began included.
		"mlx5_0/1": prev["mlx5_0/1"],
		// Another reason, another condition, a port not published before: the probe's words, since now.
		"mlx5_1/1": {Condition: v1alpha1.LinkDegraded, Reason: "LinkDowned", Message: "link_downed rose by 1", Since: at(now)},
		"mlx5_2/1": {Condition: v1alpha1.LinkDown, Reason: "PortDown", Message: "state DOWN", Since: at(now)},
		"mlx5_3/1": {Condition: v1alpha1.LinkHealthy, Since: at(now)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(kept, probed[0].Ports[0].Health); diff != "" {
		t.Errorf("the probe's result changed (-before +after):\n%s", diff)
	}
}

// TestCountersThatClimbWriteOnce runs the agent with the real RDMA probe on a DGX H100 fixture at /sys (a
// private mount namespace, as the agent meets sysfs): symbol errors that climb cycle after cycle make one
// write, when the port turns Degraded, and none while they keep climbing; the report's message and since stay
// those of that write. A port trained at 200 Gb/s among 400 Gb/s peers is reported with RateGbps 200 (its
// peers are the aggregator's to compare).
func TestCountersThatClimbWriteOnce(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "agent-health-node"}}
	if err := testenv.Shared.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	root := rdmatest.Copy(t, filepath.Join(testenv.RepoRoot(), "discovery/rdma/testdata/dgx-h100-ib"))
	counter := filepath.Join(root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error")
	rdmatest.Replace(t, filepath.Join(root, "class/infiniband/mlx5_3/ports/1/rate"), "200 Gb/sec (2X NDR)")

	now := time.Unix(1_800_000_000, 0)
	probe, err := rdma.New(discovery.Config{SysfsRoot: "/sys"}, rdma.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, node.Name, &now, rdmatest.Mount(t, root).Probe(probe))
	port := func(dev string) v1alpha1.RDMAPort {
		t.Helper()
		for _, d := range getReport(t, node.Name).Spec.RDMADevices {
			if d.Name == dev {
				return d.Ports[0]
			}
		}
		t.Fatalf("%s is not in the report", dev)
		return v1alpha1.RDMAPort{}
	}

	if !cycle(t, a) {
		t.Fatal("the first cycle wrote nothing")
	}
	if p := port("mlx5_3"); p.RateGbps != 200 || p.Width != "2X" || p.Health == nil || p.Health.Condition != v1alpha1.LinkHealthy {
		t.Errorf("mlx5_3, trained at 2X: %+v", p)
	}
	if h := port("mlx5_5").Health; h == nil || h.Condition != v1alpha1.LinkDown || h.Reason != rdma.ReasonPortDown {
		t.Errorf("mlx5_5, its cable out: %+v", h)
	}
	degradedAt := now.Add(2 * time.Minute)
	for i, errs := range []string{"0", "40", "95", "180", "260"} {
		now = now.Add(time.Minute)
		rdmatest.Replace(t, counter, errs)
		wrote := cycle(t, a)
		if want := i == 1; wrote != want { // cycle 1: the same counters; 2: the first climb; then more climbs
			t.Errorf("cycle with %s symbol errors: wrote %v, want %v", errs, wrote, want)
		}
	}
	if got := count(a.Metrics.writes); got != 2 {
		t.Errorf("%v writes, want 2: the first report and the port turning Degraded", got)
	}
	want := &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDegraded, Reason: "SymbolErrors",
		Message: "symbol_error rose by 40 in 2m0s (threshold 10 per hour)", Since: &metav1.Time{Time: degradedAt}}
	if diff := cmp.Diff(want, port("mlx5_0").Health, cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
		t.Errorf("mlx5_0 health (-want +got):\n%s", diff)
	}

	// A restarted agent has no counters to compare yet: mlx5_0 is Healthy again (one write), while mlx5_5 keeps
	// the since it was published with.
	downSince := port("mlx5_5").Health.Since
	now = now.Add(time.Minute)
	fresh, err := rdma.New(discovery.Config{SysfsRoot: "/sys"}, rdma.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !cycle(t, newAgent(t, node.Name, &now, rdmatest.Mount(t, root).Probe(fresh))) {
		t.Error("the restarted agent did not write mlx5_0 back to Healthy")
	}
	if h := port("mlx5_0").Health; h.Condition != v1alpha1.LinkHealthy || !h.Since.Equal(&metav1.Time{Time: now}) {
		t.Errorf("mlx5_0 after the restart: %+v", h)
	}
	if h := port("mlx5_5").Health; !h.Since.Equal(downSince) {
		t.Errorf("mlx5_5 since %v after the restart, want %v", h.Since, downSince)
	}
}
