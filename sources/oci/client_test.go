package oci

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// TestRetryPolicy: bounded attempts, waits doubling from one second up to the cap.
func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		attempts uint
		waits    []time.Duration // after attempts 1, 2, …
	}{{
		name:     "defaults",
		attempts: cloudsource.DefaultMaxAttempts,
		waits:    []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second},
	}, {
		name:     "a cap below a second",
		opts:     Options{Retry: cloudsource.Retry{MaxAttempts: 3, MaxBackoff: time.Millisecond}},
		attempts: 3,
		waits:    []time.Duration{time.Millisecond, time.Millisecond},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := (&Source{settings: tc.opts}).retryPolicy()
			if p.MaximumNumberAttempts != tc.attempts {
				t.Errorf("%d attempts, want %d", p.MaximumNumberAttempts, tc.attempts)
			}
			var waits []time.Duration
			for a := range uint(len(tc.waits)) {
				waits = append(waits, p.NextDuration(common.OCIOperationResponse{AttemptNumber: a + 1}))
			}
			if diff := cmp.Diff(tc.waits, waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if p.NonEventuallyConsistentPolicy != nil {
				t.Error("the policy waits out eventual consistency, which a read of the hosts has no use for")
			}
		})
	}
}
