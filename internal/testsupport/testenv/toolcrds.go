package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// InstallToolCRDs installs into e the CRDs that hack/install-tools.sh copied from a project's module into
// bin/NAME (e.g. nfd-crds: NodeFeatureDiscovery's), and waits until they are served. A missing folder fails the
// test, naming the command that makes it.
func (e *Env) InstallToolCRDs(tb testing.TB, name string) {
	tb.Helper()
	dir := filepath.Join(RepoRoot(), "bin", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("the CRDs of %s are missing (%v): run `hack/install-tools.sh %s` (make tools)", name, err, name)
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	if _, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		tb.Fatalf("installing the CRDs of %s: %v", dir, err)
	}
}
