package testenv

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

// Shared is the environment of the current test binary, set by Main; nil when it has none. Tests reach it
// through Require, which skips or fails them when it is nil.
var Shared *Env

// NoControlPlaneEnv, set to 1, tells Main not to start a control plane at all: `make unit` runs every package's
// tests that need none, and the others skip (even under CI, as the run asked for none).
const NoControlPlaneEnv = "FABRICMAP_NO_CONTROL_PLANE"

var (
	// unavailable says why Shared is nil once Main has run.
	unavailable error
	// optedOut is true when NoControlPlaneEnv asked for no control plane.
	optedOut bool
	// skipped counts the tests Require skipped, for Main's closing line.
	skipped atomic.Int32
)

// Main starts one environment for a whole test package (call it from TestMain), runs the tests and stops it.
// When there is no control plane (NoControlPlaneEnv=1, or its binaries are missing, or it will not start) the
// tests still run: those that need none pass or fail on their own, and those that call Require skip with the
// reason, or fail where they must not skip (see Require).
func Main(m *testing.M) { os.Exit(mainWith(m, Options{})) }

// mainWith is Main with a control plane started by StartWith(opts); it returns the exit code.
func mainWith(m *testing.M, opts Options) int {
	if os.Getenv(NoControlPlaneEnv) == "1" {
		optedOut = true
		unavailable = fmt.Errorf("%s=1: this run starts no control plane", NoControlPlaneEnv)
		return runWithout(m)
	}
	env, err := StartWith(opts)
	if err != nil {
		unavailable = err
		fmt.Fprintln(os.Stderr, "testenv: no control plane: the tests that need one will not run:", err)
		return runWithout(m)
	}
	Shared = env
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	return code
}

// runWithout runs the tests without a control plane and says how many of them Require skipped.
func runWithout(m *testing.M) int {
	code := m.Run()
	if n := skipped.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "SKIP %d tests that need a control plane: %v\n", n, unavailable)
	}
	return code
}

// Require returns the shared control plane to a test that needs one; call it first thing. Without one the
// test is skipped, saying why, when the control-plane binaries are missing or NoControlPlaneEnv asked for
// none; it fails instead when the binaries are missing under CI (CI=true), where integration tests must never
// silently not run, when the control plane failed to start, or when the package's TestMain never called Main.
func Require(tb testing.TB) *Env {
	tb.Helper()
	if Shared != nil {
		return Shared
	}
	switch {
	case unavailable == nil:
		tb.Fatal("testenv.Require: no control plane: the package's TestMain must call testenv.Main(m)")
	case optedOut:
	case !errors.Is(unavailable, ErrNoAssets):
		tb.Fatalf("the control plane did not start: %v", unavailable)
	case os.Getenv("CI") == "true":
		tb.Fatalf("this test needs a control plane, and under CI=true it must not skip: %v", unavailable)
	}
	skipped.Add(1)
	tb.Skipf("SKIP: this test needs a control plane: %v", unavailable)
	return nil
}

// StartForTest starts a control plane of the test's own (for a test that changes what the shared one would
// see, or a package without testenv.Main) and stops it when the test ends. Missing binaries skip the test,
// except under CI (CI=true), where it fails; any other failure to start fails it.
func StartForTest(tb testing.TB) *Env {
	tb.Helper()
	env, err := Start()
	if errors.Is(err, ErrNoAssets) && os.Getenv("CI") != "true" {
		tb.Skipf("SKIP: this test needs a control plane: %v", err)
	}
	if err != nil {
		tb.Fatalf("starting a control plane: %v", err)
	}
	tb.Cleanup(func() {
		if err := env.Stop(); err != nil {
			tb.Errorf("stopping the control plane: %v", err)
		}
	})
	return env
}
