package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

func TestOutputTakesConcurrentWrites(t *testing.T) {
	var o Output
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&o, "line %d\n", i) })
	}
	wg.Wait()
	if got := len(o.String()); got != 8*len("line 0\n") {
		t.Errorf("%d bytes kept, want %d", got, 8*len("line 0\n"))
	}
}

func TestPeakRSSKiB(t *testing.T) {
	kb, err := PeakRSSKiB(os.Getpid())
	if err != nil || kb < 1024 {
		t.Fatalf("peak RSS of this test = %v KiB, %v; want a plausible figure", kb, err)
	}
	if _, err := PeakRSSKiB(-1); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

func TestCPUTimeGrowsWithWork(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		// Spin: this process's CPU time must grow by about the time spun.
	}
	after, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 50*time.Millisecond {
		t.Errorf("CPU time grew by %v over 100 ms of spinning, want at least 50 ms", after-before)
	}
	if _, err := CPUTime(-1); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

func TestChildPIDFindsOnlyChildren(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if pid, err := ChildPID("sleep"); err != nil || pid != cmd.Process.Pid {
		t.Errorf("ChildPID(sleep) = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	if pid, err := ChildPID("no-such-command"); err == nil {
		t.Errorf("ChildPID(no-such-command) = %d, want an error", pid)
	}
}

func TestRSSKiB(t *testing.T) {
	anon, file, err := RSSKiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if anon <= 0 || file <= 0 {
		t.Errorf("RSSKiB of this test = anon %v, file %v KiB; want both above 0", anon, file)
	}
	if _, _, err := RSSKiB(-1); err == nil {
		t.Error("RSSKiB(-1) gave no error")
	}
}
