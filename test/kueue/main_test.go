// Package kueue runs the real Kueue controller manager (v0.15.0, built from its module by
// `hack/install-tools.sh kueue` into bin/kueue) with Topology Aware Scheduling on a real etcd, kube-apiserver
// and kube-scheduler, against the Kueue Topology and node labels that fabricmap's aggregator writes: a pod
// group that asks for one leaf is admitted into one leaf of fabricmap's tree and bound there, one larger than
// any leaf stays pending with Kueue's reason, and one that only prefers a leaf spans the fewest leaves.
package kueue

import (
	"log/slog"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) {
	// The aggregator runs in this process; what its watches log outside its own logger goes to stderr.
	ctrllog.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	testenv.Main(m)
}
