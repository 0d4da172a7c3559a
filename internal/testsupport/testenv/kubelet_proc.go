package testenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Component names one process of a KubeletCluster, as accepted by Logs.
type Component string

// The processes a KubeletCluster runs.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	KubeProxy         Component = "kube-proxy"
	Containerd        Component = "containerd"
	Kubelet           Component = "kubelet"
)

// logTailBytes is how much of a component's log an error message carries.
const logTailBytes = 4 << 10

// ComponentError says that a component of a KubeletCluster failed: it did not start, did not become ready, or
// exited while the cluster ran. LogTail is the end of its log.
type ComponentError struct {
	Component Component
	Err       error
	LogTail   string
}

// Error implements error, with the log tail on the following lines.
func (e *ComponentError) Error() string {
	return fmt.Sprintf("%s: %v\n--- last lines of %s's log ---\n%s", e.Component, e.Err, e.Component, e.LogTail)
}

// Unwrap returns the underlying error.
func (e *ComponentError) Unwrap() error { return e.Err }

// proc is one child process, started directly (its own PID, no shell) and dying with the test binary.
type proc struct {
	name    Component
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited and been reaped
	mu      sync.Mutex
	state   *os.ProcessState
	waitErr error
	stopped bool // Stop asked it to exit: its exit is not a failure
}

// startProc starts bin with args, its stdout and stderr going to logPath (a file, not a pipe: the daemons
// containerd starts inherit it and may outlive containerd). The process gets SIGKILL when the test binary dies
// (Pdeathsig); the thread that started it is kept locked for as long as the process runs, since Pdeathsig fires
// when that thread ends.
func startProc(name Component, logPath string, env []string, bin string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s's log: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the process
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := cmd.Start(); err != nil {
			_ = logf.Close()
			started <- err
			return
		}
		p.cmd = cmd
		started <- nil
		err := cmd.Wait()
		_ = logf.Close()
		p.mu.Lock()
		p.state, p.waitErr = cmd.ProcessState, err
		p.mu.Unlock()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	return p, nil
}

// pid is the process's own PID.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an unexpected exit, or nil while the process runs or after Stop ended it.
func (p *proc) exitError() error {
	if !p.exited() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	how := "exited"
	if p.state != nil {
		how = p.state.String()
	} else if p.waitErr != nil {
		how = p.waitErr.Error()
	}
	return &ComponentError{Component: p.name, Err: fmt.Errorf("process %d %s", p.pid(), how), LogTail: tailFile(p.logPath, logTailBytes)}
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs; it returns once the process is reaped.
func (p *proc) stop(grace time.Duration) {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tailFile returns about the last n bytes of a file, starting at a line boundary.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	s := string(b)
	if off > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}
