package agentapp

import (
	"testing"
	"time"
)

func TestHeartbeatFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want time.Duration
	}{
		{"the default", nil, 2 * time.Minute},
		{"once: none, so a run from cron never expires", []string{"--once"}, 0},
		{"once with an interval given", []string{"--once", "--heartbeat-interval", "1m"}, time.Minute},
		{"turned off", []string{"--heartbeat-interval", "0s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &options{}
			if _, err := o.program().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if o.heartbeat != tc.want {
				t.Errorf("heartbeat interval %v, want %v", o.heartbeat, tc.want)
			}
		})
	}
}
