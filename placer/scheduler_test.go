package placer

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/internal/testenv"
)

var (
	schedOnce sync.Once
	schedErr  error
)

// startScheduler starts the real kube-scheduler (bin/k8s/kube-scheduler, `hack/install-tools.sh
// kube-scheduler`) once for the test binary, against the shared API server with leader election off, and
// waits for its /healthz. It dies with the test binary (Pdeathsig from a thread kept for it).
func startScheduler(t *testing.T) {
	t.Helper()
	schedOnce.Do(func() { schedErr = runScheduler() })
	if schedErr != nil {
		t.Fatalf("kube-scheduler: %v", schedErr)
	}
}

func runScheduler() error {
	assets, err := testenv.AssetsDir()
	if err != nil {
		return err
	}
	bin := filepath.Join(assets, "kube-scheduler")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%w: run `hack/install-tools.sh kube-scheduler`", err)
	}
	dir, err := os.MkdirTemp("", "placer-scheduler-")
	if err != nil {
		return err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := testenv.Shared.Kubeconfig(kc); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	log, err := os.Create(filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		return err
	}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child ends: keep this one for good.
		runtime.LockOSThread()
		cmd := exec.Command(bin, "--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
			"--leader-elect=false", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir", dir, "-v=2")
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		started <- cmd.Start()
		_ = cmd.Wait()
		select {} // never return: the thread must outlive the test binary's use of the scheduler
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local test server's self-signed cert
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no healthy /healthz on port %d within 60s; log: %s", port, log.Name())
}
