package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testsupport/proctest"
)

// TestEtcdFsync checks that Options.EtcdFsync makes etcd sync its write-ahead log to disk, which envtest's
// default (--unsafe-no-fsync) skips: etcd counts every fsync of its log in
// etcd_disk_wal_fsync_duration_seconds, and only a real one.
func TestEtcdFsync(t *testing.T) {
	if _, err := AssetsDir(); errors.Is(err, ErrNoAssets) && os.Getenv("CI") != "true" {
		t.Skipf("SKIP: %v", err)
	}
	for _, tc := range []struct {
		name   string
		fsync  bool
		synced bool
	}{
		{name: "envtest's default: no fsync", fsync: false, synced: false},
		{name: "EtcdFsync: every write synced", fsync: true, synced: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := StartWith(Options{EtcdFsync: tc.fsync})
			if err != nil {
				t.Fatalf("starting the control plane: %v", err)
			}
			defer func() {
				if err := env.Stop(); err != nil {
					t.Errorf("stopping the control plane: %v", err)
				}
			}()
			url := env.env.ControlPlane.Etcd.URL.String() + "/metrics"
			fsyncs := func() float64 {
				n, _, err := proctest.Metric(url, "etcd_disk_wal_fsync_duration_seconds_count")
				if err != nil {
					t.Fatalf("reading etcd's metrics at %s: %v", url, err)
				}
				return n
			}
			// etcd syncs a few times while it starts whatever the flag says; count the syncs of the writes.
			before := fsyncs()
			const writes = 20
			for i := range writes {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fsync-%d", i), Namespace: metav1.NamespaceDefault}}
				if err := env.Client.Create(context.Background(), cm); err != nil {
					t.Fatalf("writing through the API server: %v", err)
				}
			}
			n := fsyncs() - before
			if synced := n >= writes; synced != tc.synced {
				t.Errorf("etcd synced its log %v times for %d writes; want every write synced: %v", n, writes, tc.synced)
			}
		})
	}
}

// TestEtcdArgs checks that Options.EtcdArgs reach etcd: its backend quota, which etcd exposes as a metric.
func TestEtcdArgs(t *testing.T) {
	if _, err := AssetsDir(); errors.Is(err, ErrNoAssets) && os.Getenv("CI") != "true" {
		t.Skipf("SKIP: %v", err)
	}
	const quota = 8 << 30
	env, err := StartWith(Options{EtcdArgs: map[string][]string{"quota-backend-bytes": {fmt.Sprint(quota)}}})
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	}()
	url := env.env.ControlPlane.Etcd.URL.String() + "/metrics"
	got, found, err := proctest.Metric(url, "etcd_server_quota_backend_bytes")
	if err != nil || !found || got != quota {
		t.Errorf("etcd_server_quota_backend_bytes = %v (found %v, %v), want %d", got, found, err, quota)
	}
}
