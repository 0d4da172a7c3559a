package testenv

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KAICRDDir holds the CRD of NVIDIA KAI Scheduler's Topology (kai.scheduler/v1alpha1), shaped as KAI's own: no
// module here ships it and the chart does not carry it, so it is a test file.
func KAICRDDir() string {
	return filepath.Join(RepoRoot(), "test", "testdata", "kai-crd")
}

// InstallKAICRD installs KAI's Topology CRD into e, waits until it is served, and uninstalls it (with every
// Topology) when the test ends, leaving e as the test found it: the other tests of a shared environment see a
// cluster without KAI.
func (e *Env) InstallKAICRD(tb testing.TB) {
	tb.Helper()
	opts := envtest.CRDInstallOptions{Paths: []string{KAICRDDir()}, ErrorIfPathMissing: true}
	if _, err := envtest.InstallCRDs(e.Config, opts); err != nil {
		tb.Fatalf("installing KAI's Topology CRD from %s: %v", KAICRDDir(), err)
	}
	tb.Cleanup(func() {
		if err := envtest.UninstallCRDs(e.Config, opts); err != nil {
			tb.Errorf("uninstalling KAI's Topology CRD: %v", err)
		}
	})
}
