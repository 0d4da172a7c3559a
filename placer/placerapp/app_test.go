package placerapp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/placer"
)

// TestFlags reads the placer's Config from flags and a --config file, and Validate refuses bad settings.
func TestFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "placer.yaml")
	if err := os.WriteFile(file, []byte("reservation-timeout: 10m\npreemption-max-victims: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defaults := placer.Config{LeaderElection: true, LeaderElectionNamespace: "default", LeaderElectionID: "fabricmap-placer",
		MetricsAddr: ":8080", HealthAddr: ":8081", ReservationTimeout: 5 * time.Minute, Resync: 30 * time.Second,
		Retry: 2 * time.Second, Preemption: placer.Preemption{Enabled: true, MaxVictims: placer.DefaultMaxVictims}, AvoidDegraded: true}
	cases := []struct {
		name    string
		args    []string
		change  func(*placer.Config)
		wantErr string
	}{
		{name: "defaults", change: func(*placer.Config) {}},
		{name: "flags", args: []string{"--leader-elect=false", "--preemption-namespaces", "a,b", "--resync", "5s", "--avoid-degraded=false"}, change: func(c *placer.Config) {
			c.LeaderElection, c.Preemption.Namespaces, c.Resync, c.AvoidDegraded = false, []string{"a", "b"}, 5*time.Second, false
		}},
		{name: "config file, a flag wins", args: []string{"--config", file, "--preemption-max-victims", "4"}, change: func(c *placer.Config) {
			c.ReservationTimeout, c.Preemption.MaxVictims = 10*time.Minute, 4
		}},
		{name: "zero resync", args: []string{"--resync", "0s"}, wantErr: "must be positive"},
		{name: "no victims", args: []string{"--preemption-max-victims", "0"}, wantErr: "--preemption-max-victims=0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", "")
			o := &options{}
			_, err := o.program().Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaults
			tc.change(&want)
			if diff := cmp.Diff(want, o.conf); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
		})
	}
}
