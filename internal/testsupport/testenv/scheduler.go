package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// StartScheduler starts the real kube-scheduler (bin/k8s/kube-scheduler, `hack/install-tools.sh
// kube-scheduler`) against the shared API server, as a cluster admin with leader election off, and waits for
// its /healthz; stop kills it. It also dies with the test binary (Pdeathsig, from a thread kept for as long as
// it runs). Stop it before the API server: an API server with a scheduler still watching takes a minute to stop.
func StartScheduler() (stop func(), err error) { return StartSchedulerWith() }

// StartSchedulerWith is StartScheduler with extra kube-scheduler flags after the harness's own, such as
// "--feature-gates=GangScheduling=true" (a flag given again wins).
func StartSchedulerWith(extraArgs ...string) (stop func(), err error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(assets, "kube-scheduler")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: run `hack/install-tools.sh kube-scheduler`", err)
	}
	dir, err := os.MkdirTemp("", "placer-scheduler-")
	if err != nil {
		return nil, err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := Shared.Kubeconfig(kc); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--leader-elect=false", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir", dir, "-v=2"}
	p, err := StartProcess(bin, append(args, extraArgs...), nil, filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		return nil, err
	}
	stop = func() {
		p.Stop()
		_ = os.RemoveAll(dir)
	}
	if err := p.WaitHealthy(port, 60*time.Second); err != nil {
		stop()
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	return stop, nil
}
