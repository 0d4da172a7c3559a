package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"time"
)

// process is a long-running binary the demo started.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done closes
}

// startProcess starts cmd. The returned context ends, with the process's exit as its cause, when the process
// exits before stop is called.
func startProcess(ctx context.Context, name string, cmd *exec.Cmd) (*process, context.Context, error) {
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	alive, cancel := context.WithCancelCause(ctx)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
		cancel(fmt.Errorf("%s exited: %v", name, p.err))
	}()
	return p, alive, nil
}

// stop asks the process to stop (SIGTERM), as the kubelet would, and kills it after grace.
func (p *process) stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %v of SIGTERM: killed", p.name, grace)
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) && exit.Exited() && exit.ExitCode() != 0 {
		return fmt.Errorf("%s: %w", p.name, p.err)
	}
	return nil // stopped by its signal, or exited cleanly
}

// freeAddr returns a free address on 127.0.0.1 for a binary to listen on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// poll calls cond every quarter second until it holds, ctx ends (its cause is returned) or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline.C:
			return fmt.Errorf("not within %v", timeout)
		case <-tick.C:
		}
	}
	return nil
}
