package testenv

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KAICRDDir holds the CRD of NVIDIA KAI Scheduler's Topology (kai.scheduler/v1alpha1), shaped as KAI's own: no
// module here ships it and the chart does not carry it, so it is a test file.
func KAICRDDir() string {
	return filepath.Join(RepoRoot(), "test", "testdata", "kai-crd")
}

// kaiCRDName is the name of KAI's Topology CRD.
const kaiCRDName = "topologies.kai.scheduler"

// InstallKAICRD installs KAI's Topology CRD into e and waits until it is served. The function it returns
// uninstalls it (with every Topology) and waits until it is gone; it also runs when the test ends, so that the
// other tests of a shared environment see a cluster without KAI. Clients that mapped the kind before keep
// their mapping: requests through them then get a 404 that names no object.
func (e *Env) InstallKAICRD(tb testing.TB) (uninstall func()) {
	tb.Helper()
	opts := envtest.CRDInstallOptions{Paths: []string{KAICRDDir()}, ErrorIfPathMissing: true}
	if _, err := envtest.InstallCRDs(e.Config, opts); err != nil {
		tb.Fatalf("installing KAI's Topology CRD from %s: %v", KAICRDDir(), err)
	}
	var once sync.Once
	uninstall = func() {
		once.Do(func() {
			if err := envtest.UninstallCRDs(e.Config, opts); err != nil {
				tb.Errorf("uninstalling KAI's Topology CRD: %v", err)
				return
			}
			Eventually(tb, 30*time.Second, "KAI's Topology CRD gone", func() (bool, string) {
				crd := &unstructured.Unstructured{}
				crd.SetAPIVersion("apiextensions.k8s.io/v1")
				crd.SetKind("CustomResourceDefinition")
				err := e.Client.Get(context.Background(), client.ObjectKey{Name: kaiCRDName}, crd)
				if apierrors.IsNotFound(err) {
					return true, ""
				}
				return false, "CRD still there (deleting)"
			})
		})
	}
	tb.Cleanup(uninstall)
	return uninstall
}
