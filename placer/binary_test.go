package placer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// freeAddr returns a free local address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// get returns the body of a GET, or "" when it fails or is not 200.
func get(url string) string {
	resp, err := http.Get(url) //nolint:gosec,noctx // a local test server
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(body)
}

// testBinary runs the placer as its binary does (placerapp.Main: the flags' defaults, leader election,
// /healthz, /readyz, /metrics) and checks that it places a gang and counts it. The flags themselves are
// placer/placerapp's tests.
func testBinary(t *testing.T) {
	b := newBed(t)
	b.twoNodeLeaf("bin")
	metrics, health := freeAddr(t), freeAddr(t)
	conf := Config{LeaderElection: true, LeaderElectionNamespace: b.ns, LeaderElectionID: "fabricmap-placer",
		MetricsAddr: metrics, HealthAddr: health, ReservationTimeout: 5 * time.Minute, Resync: 5 * time.Second,
		Retry: 2 * time.Second, Preemption: Preemption{Enabled: true, MaxVictims: DefaultMaxVictims}}
	if err := conf.Validate(); err != nil {
		t.Fatal(err)
	}
	mgr, err := NewManager(testenv.Shared.Config, conf, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("placer: %v", err)
		}
	})
	b.eventually(30*time.Second, "healthy and ready", func() (bool, string) {
		return get("http://"+health+"/healthz") != "" && get("http://"+health+"/readyz") != "", "not yet"
	})
	b.gang("g", 2, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
	b.bound("g", 2, 30*time.Second)
	var lease coordinationv1.Lease
	if err := b.c.Get(b.ctx, client.ObjectKey{Namespace: b.ns, Name: "fabricmap-placer"}, &lease); err != nil {
		t.Fatalf("leader-election Lease: %v", err)
	}
	b.eventually(10*time.Second, "metrics", func() (bool, string) {
		body := get("http://" + metrics + "/metrics")
		for _, want := range []string{"fabricmap_placer_gangs_placed_total 1", "fabricmap_placer_placement_latency_seconds_count 1",
			"fabricmap_placer_gangs_waiting 0", "fabricmap_placer_gangs_preempted_total 0"} {
			if !strings.Contains(body, want) {
				return false, fmt.Sprintf("no %q in /metrics", want)
			}
		}
		return true, ""
	})
}
