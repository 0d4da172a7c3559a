// Package install installs the Helm chart for real: the image built by `make image` imported into a real
// single-node cluster (containerd and a kubelet, testenv.StartKubeletCluster), `helm install` of
// charts/fabricmap, and the pods checked as a cluster admin would: the agent hears a real lldpd switch on the
// node's uplink and publishes with its kubelet-issued token, NVML comes from the host driver folder, the
// aggregator writes HyperNodes and labels with the chart's RBAC, `helm test`, upgrade, UFM from the admin's
// own Secret and CA over TLS (with the rewrite it brings confirmed and the Secret rotated), the capture CronJob
// and the monitoring objects on the Prometheus Operator's CRDs, and uninstall.
//
// It needs root (network namespaces, a kubelet) and the image (bin/image/fabricmap.tar); `make e2e-install`
// builds everything first. Without them it skips with the reason, except under CI=true, where it fails.
package install

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// imageArchive is what `make image` writes.
func imageArchive() string { return filepath.Join(testenv.RepoRoot(), "bin", "image", "fabricmap.tar") }

func TestMain(m *testing.M) {
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "a kubelet and network namespaces need root"
	default:
		if _, err := os.Stat(imageArchive()); err != nil {
			reason = fmt.Sprintf("no image at %s: run `make image` (or `make e2e-install`)", imageArchive())
		}
	}
	if reason != "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "install: refusing to skip under CI:", reason)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "SKIP install:", reason)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
