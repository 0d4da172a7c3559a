package testenv

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// StartScheduler starts the real kube-scheduler (bin/k8s/kube-scheduler, `hack/install-tools.sh
// kube-scheduler`) against the shared API server, as a cluster admin with leader election off, and waits for
// its /healthz; stop kills it. It also dies with the test binary (Pdeathsig, from a thread kept for as long as
// it runs). Stop it before the API server: an API server with a scheduler still watching takes a minute to stop.
func StartScheduler() (stop func(), err error) {
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	log, err := os.Create(filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		return nil, err
	}
	started := make(chan *exec.Cmd, 1)
	startErr := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		// Pdeathsig fires when the thread that started the child ends: keep this one for good.
		runtime.LockOSThread()
		cmd := exec.Command(bin, "--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
			"--leader-elect=false", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir", dir, "-v=2")
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		started <- cmd
		_ = cmd.Wait()
		close(exited)
	}()
	var cmd *exec.Cmd
	select {
	case err := <-startErr:
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	case cmd = <-started:
	}
	stop = func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = os.RemoveAll(dir)
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local test server's self-signed cert
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	return nil, fmt.Errorf("no healthy /healthz on port %d within 60s (kube-scheduler's log was %s)", port, log.Name())
}
