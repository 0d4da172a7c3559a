package koordinator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// noKoordEnv, set to 1, lets this package's tests skip when koord-scheduler is not built. Without it a missing
// binary fails them: the run that includes them must build it first (hack/install-tools.sh koord).
const noKoordEnv = "FABRICMAP_NO_KOORD"

// schedulerName is the profile koord-scheduler serves; the test's pods name it.
const schedulerName = "koord-scheduler"

// koordAsset returns bin/NAME as hack/install-tools.sh koord installs it, skipping the test when it is missing and
// noKoordEnv says that is expected, failing it when it is missing otherwise.
func koordAsset(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "bin", name)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv(noKoordEnv) == "1" {
			t.Skipf("SKIP: Koordinator is not built (%v) and %s=1: run `hack/install-tools.sh koord` to test fabricmap's ClusterNetworkTopology with koord-scheduler", err, noKoordEnv)
		}
		t.Fatalf("Koordinator's %s is missing (%v): run `hack/install-tools.sh koord`, or set %s=1 to skip", name, err, noKoordEnv)
	}
	return path
}

// installKoordCRDs installs the CRDs koord-scheduler watches, as Koordinator's module ships them (bin/koord-crds),
// except its ClusterNetworkTopology: the one under test is the CRD fabricmap's chart carries, which testenv
// installed already.
func installKoordCRDs(t *testing.T) {
	t.Helper()
	dir := koordAsset(t, "koord-crds")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") && !strings.Contains(e.Name(), "clusternetworktopologies") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	if _, err := envtest.InstallCRDs(testenv.Shared.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing Koordinator's CRDs from %s: %v", dir, err)
	}
}

// koordConfig is koord-scheduler's configuration: no leader election, one profile whose gang plugin
// (Coscheduling) is network-topology aware, with the default plugins besides.
const koordConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: %s
profiles:
- schedulerName: ` + schedulerName + `
  plugins:
    preEnqueue:
      enabled:
      - name: Coscheduling
    queueSort:
      disabled:
      - name: "*"
      enabled:
      - name: PrioritySort
    preFilter:
      enabled:
      - name: Coscheduling
    postFilter:
      enabled:
      - name: Coscheduling
    reserve:
      enabled:
      - name: Coscheduling
    permit:
      enabled:
      - name: Coscheduling
    postBind:
      enabled:
      - name: Coscheduling
  pluginConfig:
  - name: Coscheduling
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: CoschedulingArgs
      awareNetworkTopology: true
`

// startKoordScheduler starts koord-scheduler against the shared API server with its network-topology manager
// on, waits for its /healthz, and stops it when the test ends (printing the end of its log if the test failed).
// It dies with the test binary (Pdeathsig, from a thread kept for as long as it runs).
func startKoordScheduler(t *testing.T) {
	t.Helper()
	bin := koordAsset(t, "koord-scheduler")
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, koordConfig, kc), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := testenv.StartProcess(bin, []string{"--config", config, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir", dir,
		"--enable-network-topology-manager", "-v=4"}, nil, filepath.Join(dir, "koord-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("koord-scheduler's log (%s), last lines:\n%s", p.Log, testenv.Tail(p.Log, 80))
		}
	})
	if err := p.WaitHealthy(port, 90*time.Second); err != nil {
		t.Fatalf("koord-scheduler: %v", err)
	}
}
