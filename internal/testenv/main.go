package testenv

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Shared is the environment of the current test binary, set by Main.
var Shared *Env

// Main starts one environment for a whole test package (call it from TestMain), runs the tests and stops it.
// Without the control-plane binaries the package's tests are skipped with a message, except under CI (CI=true)
// where that is a failure: integration tests must never silently not run there.
func Main(m *testing.M) {
	env, err := Start()
	if errors.Is(err, ErrNoAssets) && os.Getenv("CI") != "true" {
		fmt.Fprintln(os.Stderr, "SKIP integration tests:", err)
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
	Shared = env
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
	}
	os.Exit(code)
}
