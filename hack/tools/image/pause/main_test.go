package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildPause compiles this package as the image does (static).
func buildPause(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building pause: %v\n%s", err, out)
	}
	return bin
}

// waitExit waits up to d for cmd to exit and returns its error.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("pause did not exit within %s", d)
		return nil
	}
}

func TestExitsZeroOnSignal(t *testing.T) {
	bin := buildPause(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // let it install its handlers
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := waitExit(t, cmd, 5*time.Second); err != nil {
			t.Errorf("after %v: %v, want exit status 0", sig, err)
		}
	}
}

// TestReapsOrphans runs pause as PID 1 of a new PID namespace, orphans a short-lived process inside it and
// checks that pause collects it instead of leaving a zombie.
func TestReapsOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a new PID namespace")
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("needs nsenter (util-linux)")
	}
	bin := buildPause(t)
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := waitExit(t, cmd, 5*time.Second); err != nil {
			t.Errorf("pause after SIGTERM: %v", err)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	pid := strconv.Itoa(cmd.Process.Pid)
	// sh leaves "sleep" behind and exits; the orphan is re-parented to the namespace's PID 1, pause.
	out, err := exec.Command("nsenter", "-t", pid, "-p", "--", "sh", "-c", "sleep 0.3 & exit 0").CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter: %v\n%s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	sawChild := false
	for {
		children, zombies := childrenOf(t, cmd.Process.Pid)
		sawChild = sawChild || children > 0
		if children == 0 && zombies == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pause still has %d children, %d of them zombies", children, zombies)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sawChild {
		t.Log("the orphan exited before it was seen as pause's child; reaping is still checked: none is left")
	}
}

// childrenOf counts the processes whose parent is ppid, and how many of them are zombies.
func childrenOf(t *testing.T, ppid int) (children, zombies int) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		children++
		if f[0] == "Z" {
			zombies++
		}
	}
	return children, zombies
}
