package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond every quarter second until it holds, and fails the test with what and cond's last
// word once timeout has passed: the wait of tests on a real cluster, where everything converges in time.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() (ok bool, why string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v: %s", what, timeout, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
