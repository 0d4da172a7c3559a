package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// pendingWindow is how long the scheduler's CPU is measured while a gang is pending; maxPendingShare is the
// share of one core it may use meanwhile (the bound: an unschedulable gang costs nothing while nothing
// changes).
const (
	pendingWindow   = 30 * time.Second
	maxPendingShare = 0.01
)

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// processCPU returns the CPU time (user and system) the process running the binary at path has used.
func processCPU(t *testing.T, path string) time.Duration {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || exe != path {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			t.Fatal(err)
		}
		// Fields after the command's closing parenthesis: state is the first, utime the 12th, stime the 13th.
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
		utime, err1 := strconv.ParseInt(f[11], 10, 64)
		stime, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("reading /proc/%s/stat: %q", e.Name(), stat)
		}
		return time.Duration(utime+stime) * time.Second / clockTicks
	}
	t.Fatalf("no process runs %s", path)
	return 0
}

// checkPendingCost submits a gang that fits nowhere (3 whole-node pods in the pool of 2 nodes), waits until
// the scheduler finds it unschedulable, and fails when the scheduler then uses more than maxPendingShare of a
// core over pendingWindow while nothing else changes.
func checkPendingCost(t *testing.T, bin string) {
	ctx := t.Context()
	g := gang{name: "pending", pods: 3}
	ns := "fs-" + g.name
	g.submit(t, ctx, ns, "bad")
	testenv.Eventually(t, time.Minute, "the scheduler to find the gang unschedulable", func() (bool, string) {
		c, err := scheduledCondition(ctx, ns, g.name)
		if err != nil || c == nil {
			return false, fmt.Sprintf("condition %v, %v", c, err)
		}
		return c.Status == metav1.ConditionFalse && c.Reason == podGroupUnschedulable, fmt.Sprintf("%+v", *c)
	})
	start := processCPU(t, bin)
	time.Sleep(pendingWindow)
	used := processCPU(t, bin) - start
	share := used.Seconds() / pendingWindow.Seconds()
	if share > maxPendingShare {
		t.Errorf("fabricmap-scheduler used %v of CPU in %v with one gang pending: %.1f%% of a core; want at most %.0f%%",
			used, pendingWindow, 100*share, 100*maxPendingShare)
	}
	t.Logf("with one gang pending: %v of CPU in %v (%.2f%% of a core)", used, pendingWindow, 100*share)
}
