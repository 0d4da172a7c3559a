package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// schedulerName is the profile of config/fabricmap-scheduler.yaml: pods that name it are fabricmap-scheduler's.
const schedulerName = "fabricmap-scheduler"

// moduleRoot is the scheduler module's folder (the test runs in its test/ folder).
const moduleRoot = ".."

// buildScheduler builds ./cmd/fabricmap-scheduler of this module into dir and returns the binary's path.
func buildScheduler(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "fabricmap-scheduler")
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fabricmap-scheduler")
	cmd.Dir = moduleRoot // built as make build builds it, so that the two share the build cache
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building fabricmap-scheduler: %v\n%s", err, out)
	}
	t.Logf("built fabricmap-scheduler in %s", time.Since(start).Round(time.Second))
	return bin
}

// schedulerConfig writes the module's KubeSchedulerConfiguration (config/fabricmap-scheduler.yaml) to dir with
// what a deployment adds: the kubeconfig to reach the API server and leader election off.
func schedulerConfig(t *testing.T, dir, kubeconfig string) string {
	t.Helper()
	src := filepath.Join(moduleRoot, "config", "fabricmap-scheduler.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("reading the scheduler's configuration: %v", err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("parsing %s: %v", src, err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startScheduler builds fabricmap-scheduler and runs it against the shared API server with the gates and the
// module's profile, until the test ends; it waits for its /healthz and returns the binary's path. Its log is
// kept in the test's temp folder and its end printed when the test fails.
func startScheduler(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := buildScheduler(t, dir)
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		t.Fatalf("writing a kubeconfig: %v", err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", schedulerConfig(t, dir, kc), "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir", dir,
		"--feature-gates=" + featureGates, "-v=4"}
	log := filepath.Join(dir, "fabricmap-scheduler.log")
	p, err := testenv.StartProcess(bin, args, nil, log)
	if err != nil {
		t.Fatalf("starting fabricmap-scheduler: %v", err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("fabricmap-scheduler's log ends:\n%s", testenv.Tail(log, 60))
		}
	})
	if err := p.WaitHealthy(port, 90*time.Second); err != nil {
		t.Fatalf("fabricmap-scheduler: %v", err)
	}
	return bin
}
