package testenv

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Process is a program a test environment started: the API server's companions (kube-scheduler, Kueue,
// koord-scheduler), each dying with the test binary.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	// Log is the file that holds its output.
	Log string
}

// StartProcess starts name with args and extra environment (added to this process's), its output in the file
// logPath. It dies with the test binary (Pdeathsig, from a thread kept for as long as it runs).
func StartProcess(name string, args, env []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &Process{exited: make(chan struct{}), Log: logPath}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child ends: keep this one for good.
		runtime.LockOSThread()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			_ = log.Close()
			started <- err
			return
		}
		p.cmd = cmd
		started <- nil
		_ = cmd.Wait()
		_ = log.Close()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return p, nil
}

// Stop kills the process and waits until it has ended.
func (p *Process) Stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitHealthy waits up to timeout for an HTTPS /healthz on 127.0.0.1:port to answer 200; an error, with the
// end of the log, when it does not or the process ends first.
func (p *Process) WaitHealthy(port int, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local test server's self-signed cert
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		select {
		case <-p.exited:
			return fmt.Errorf("it exited before %s answered; its log (%s) ends:\n%s", url, p.Log, Tail(p.Log, 40))
		default:
		}
		if resp, err := hc.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no healthy %s within %s; its log (%s) ends:\n%s", url, timeout, p.Log, Tail(p.Log, 40))
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Tail returns the last n lines of the file at path (or why it could not be read).
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
