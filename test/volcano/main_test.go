// Package volcano runs Volcano's own components beside fabricmap's aggregator on a real etcd and
// kube-apiserver: Volcano's controller-manager (its HyperNode controller is on by default and rewrites every
// HyperNode's status) and its scheduler (with the network-topology-aware plugin, configured as
// docs/schedulers.md says), both built from Volcano's source by `hack/install-tools.sh volcano`, with
// Volcano's own CRDs. It proves that the two leave each other's fields alone (no HyperNode is written again
// once the tree has settled), that Volcano Jobs asking for one domain land inside one of fabricmap's
// HyperNodes of the allowed tier, read from the pods' bindings, and that Volcano's own discovery writing
// HyperNodes over fabricmap's nodes is reported by the aggregator and never edited or deleted by it.
package volcano

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
