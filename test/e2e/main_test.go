// Package e2e runs the whole of fabricmap as it runs in a cluster, on one machine: a real etcd,
// kube-apiserver and kube-scheduler with the chart's CRDs, RBAC and admission policies applied; two aggregator
// binaries with leader election and the placer binary, started with the chart's own arguments and
// service-account tokens; and an agent binary per emulated node, each in its own network namespace, cabled by
// veth pairs to switch namespaces that announce themselves over LLDP, authenticating with a token bound to a
// pod on its node. The tests then schedule a gang, move cables, kill the leader, kill an agent and let another
// misbehave, and check what the schedulers see.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fabricmap/fabricmap/internal/testsupport/fakenvml"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// binDir holds the fabricmap binaries built for this run.
var binDir string

func TestMain(m *testing.M) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "e2e: network namespaces need root, and CI runs as root: refusing to skip")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "SKIP e2e: network namespaces need root")
		os.Exit(0)
	}
	// Built into the git-ignored bin/ so that a rerun only relinks what changed.
	binDir = filepath.Join(testenv.RepoRoot(), "bin", "e2e")
	build := exec.Command("go", "build", "-o", binDir+"/", "./cmd/fabricmap-agent", "./cmd/fabricmap-aggregator", "./cmd/fabricmap-placer")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building the binaries: %v\n%s", err, out)
		os.Exit(1)
	}
	if err := buildFakeNVML(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	testenv.Main(m)
}

func bin(name string) string { return filepath.Join(binDir, name) }

// fakeNVML is the stand-in libnvidia-ml.so.1 the agents load (internal/fakenvml): no machine here has a GPU.
func fakeNVML() string { return filepath.Join(binDir, "fakenvml", fakenvml.LibraryName) }

// buildFakeNVML compiles the stand-in NVML library into binDir.
func buildFakeNVML() error {
	_, err := fakenvml.Build(filepath.Dir(fakeNVML()))
	return err
}
