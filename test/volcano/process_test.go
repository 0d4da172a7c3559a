package volcano

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// volcanoDir is where `hack/install-tools.sh volcano` puts Volcano's binaries (vc-scheduler,
// vc-controller-manager) and its CRDs (crds/).
func volcanoDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "bin", "volcano")
	for _, f := range []string{"vc-scheduler", "vc-controller-manager", "crds"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("Volcano is missing under CI=true (%v): run `hack/install-tools.sh volcano`", err)
			}
			t.Skipf("SKIP: Volcano is not built (%v): run `hack/install-tools.sh volcano`", err)
		}
	}
	return dir
}

// installVolcanoCRDs installs Volcano's own CRDs, as Volcano's chart does (its HyperNode CRD replaces the one
// fabricmap's chart carries: a cluster with Volcano has Volcano's), and waits until they are served.
func installVolcanoCRDs(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in %s/crds (%v): run `hack/install-tools.sh volcano`", dir, err)
	}
	if _, err := envtest.InstallCRDs(testenv.Shared.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing Volcano's CRDs: %v", err)
	}
}

// volcanoNamespace is the namespace Volcano's components run in (and read their ConfigMaps from).
const volcanoNamespace = "volcano-system"

// startVolcano runs one of Volcano's binaries against the shared API server as a cluster admin, in
// volcanoNamespace, until the test ends; its log is kept in the test's folder and printed when the test fails.
func startVolcano(t *testing.T, bin string, args ...string) *testenv.Process {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(bin)
	args = append([]string{"--kubeconfig", kc, "--leader-elect=false", "-v=3"}, args...)
	p, err := testenv.StartProcess(bin, args, []string{"KUBE_POD_NAMESPACE=" + volcanoNamespace}, filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s's log (last lines):\n%s", name, testenv.Tail(p.Log, 60))
		}
	})
	return p
}

// logLines counts the lines of a process's log that contain s.
func logLines(t *testing.T, p *testenv.Process, s string) int {
	t.Helper()
	raw, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), s)
}

// schedulerConf is the Volcano scheduler configuration docs/schedulers.md tells users to write: the YAML
// block there that starts with "actions:". The test runs with exactly what the docs say.
func schedulerConf(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "schedulers.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(raw), "```yaml\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		lines := strings.Split(body, "\n")
		indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
		if !strings.HasPrefix(strings.TrimSpace(lines[0]), "actions:") {
			continue
		}
		var out strings.Builder
		for _, l := range lines {
			if len(l) >= indent {
				l = l[indent:]
			}
			out.WriteString(strings.TrimRight(l, " ") + "\n")
		}
		if !strings.Contains(out.String(), "network-topology-aware") {
			t.Fatalf("docs/schedulers.md's scheduler configuration does not turn network-topology-aware on:\n%s", out.String())
		}
		return out.String()
	}
	t.Fatal(`docs/schedulers.md has no YAML block starting with "actions:" (the Volcano scheduler configuration)`)
	return ""
}

// writeFile writes s to a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// must fails the test on err, naming what.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
