package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/internal/workers"
)

// BenchmarkHeartbeatRenewal measures what one heartbeat renewal costs the real API server and etcd, as a
// server-side apply of the whole Lease (every renewal before issue 40) and as a merge patch of its renew time
// (every renewal after a Heartbeat's first): CPU milliseconds of each process per renewal, and renewals a
// second with 16 in flight. docs/scale.md turns them into the heartbeats' share of a control plane.
//
//	go test -run '^$' -bench HeartbeatRenewal -benchtime 4000x ./agent/
func BenchmarkHeartbeatRenewal(b *testing.B) {
	testenv.Require(b)
	ctx := context.Background()
	const nodes = 256
	hb := reportClient(b).(HeartbeatClient)
	owners := make([]*metav1.OwnerReference, nodes)
	for i := range nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("heartbeat-bench-%03d", i)}}
		if err := testenv.Shared.Client.Create(ctx, n); err != nil {
			b.Fatal(err)
		}
		owners[i] = &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
		if err := hb.ApplyHeartbeat(ctx, "default", n.Name, time.Now(), 6*time.Minute, owners[i], "fabricmap-agent"); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []struct {
		name  string
		renew func(i int) error
	}{
		{"apply", func(i int) error {
			return hb.ApplyHeartbeat(ctx, "default", owners[i%nodes].Name, time.Now(), 6*time.Minute, owners[i%nodes], "fabricmap-agent")
		}},
		{"patch", func(i int) error {
			return hb.RenewHeartbeat(ctx, "default", owners[i%nodes].Name, time.Now(), "fabricmap-agent")
		}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			apiserver, etcd := childCPU(b, "kube-apiserver"), childCPU(b, "etcd")
			start := time.Now()
			n := b.N
			b.ResetTimer()
			if err := errors.Join(workers.Run(n, 16, mode.renew)...); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			perRenewal := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
			b.ReportMetric(perRenewal(childCPU(b, "kube-apiserver")-apiserver), "apiserver-CPU-ms/renewal")
			b.ReportMetric(perRenewal(childCPU(b, "etcd")-etcd), "etcd-CPU-ms/renewal")
			b.ReportMetric(float64(n)/elapsed.Seconds(), "renewals/s")
		})
	}
}

// childCPU is the CPU time so far of the test environment's process comm (kube-apiserver or etcd).
func childCPU(b *testing.B, comm string) time.Duration {
	b.Helper()
	d, err := proctest.ChildCPUTime(comm)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
