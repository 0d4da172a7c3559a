package cloudsource

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestPollValidate: one rule for every cloud source's polling. A poll timeout given by the flags must be
// positive (their default is DefaultPollTimeout, so a zero was asked for); without the flags (`fabricmap
// topology`) zero is the poller's default. Negative values are refused either way, naming the flag.
func TestPollValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string // nil: the flags are not registered
		poll Poll     // without flags
		err  string   // a part of the error; "" for none
	}{
		{name: "the flags' defaults", args: []string{}},
		{name: "both given", args: []string{"--aws-interval=1m", "--aws-poll-timeout=30s"}},
		{name: "a zero interval", args: []string{"--aws-interval=0"}},
		{name: "a zero poll timeout", args: []string{"--aws-poll-timeout=0"}, err: "--aws-poll-timeout (0s) must be positive"},
		{name: "a negative poll timeout", args: []string{"--aws-poll-timeout=-1s"}, err: "--aws-poll-timeout (-1s) must be positive"},
		{name: "a negative interval", args: []string{"--aws-interval=-1s"}, err: "--aws-interval (-1s) must not be negative"},
		{name: "both wrong, both said", args: []string{"--aws-interval=-1s", "--aws-poll-timeout=0"},
			err: "--aws-interval (-1s) must not be negative\n--aws-poll-timeout (0s) must be positive"},
		{name: "no flags, zero: the poller's default", poll: Poll{}},
		{name: "no flags, set", poll: Poll{Interval: time.Minute, PollTimeout: time.Second}},
		{name: "no flags, a negative poll timeout", poll: Poll{PollTimeout: -time.Second}, err: "--aws-poll-timeout (-1s) must be positive"},
		{name: "no flags, a negative interval", poll: Poll{Interval: -time.Second}, err: "--aws-interval (-1s) must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.poll
			if tc.args != nil {
				fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
				p.AddFlags(fs, "aws", "interval help", "timeout help")
				if err := fs.Parse(tc.args); err != nil {
					t.Fatal(err)
				}
			}
			err := p.Validate("aws")
			if (err != nil) != (tc.err != "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Validate() = %v, want an error with %q", err, tc.err)
			}
		})
	}
}

// TestPollFlags: the flags' names, defaults and help texts, the same for every provider.
func TestPollFlags(t *testing.T) {
	var p Poll
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	p.AddFlags(fs, "oci", "how often", "how long")
	for name, want := range map[string][2]string{"oci-interval": {"10m0s", "how often"}, "oci-poll-timeout": {"2m0s", "how long"}} {
		f := fs.Lookup(name)
		if f == nil || f.DefValue != want[0] || f.Usage != want[1] {
			t.Errorf("--%s = %+v, want default %s and help %q", name, f, want[0], want[1])
		}
	}
	if p.Interval != DefaultInterval || p.PollTimeout != DefaultPollTimeout {
		t.Errorf("after AddFlags %+v, want the defaults", p)
	}
}

func TestRetry(t *testing.T) {
	for _, tc := range []struct {
		r        Retry
		attempts int
		backoff  time.Duration
		err      bool
	}{
		{r: Retry{}, attempts: DefaultMaxAttempts, backoff: DefaultMaxBackoff},
		{r: Retry{MaxAttempts: 2, MaxBackoff: time.Second}, attempts: 2, backoff: time.Second},
		{r: Retry{MaxAttempts: -1}, attempts: -1, backoff: DefaultMaxBackoff, err: true},
		{r: Retry{MaxBackoff: -1}, attempts: DefaultMaxAttempts, backoff: -1, err: true},
	} {
		if got, gotB, err := tc.r.Attempts(), tc.r.Backoff(), tc.r.Validate(); got != tc.attempts || gotB != tc.backoff || (err != nil) != tc.err {
			t.Errorf("%+v: Attempts() %d, Backoff() %v, Validate() %v; want %d, %v, error %v", tc.r, got, gotB, err, tc.attempts, tc.backoff, tc.err)
		}
	}
}
