package cloudsource

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Defaults of every cloud source's polling flags and of the retries of one call to its API.
const (
	// DefaultInterval is the default of --<provider>-interval: the time between two polls.
	DefaultInterval = 10 * time.Minute
	// DefaultPollTimeout is the default of --<provider>-poll-timeout: the bound on one poll, every call, page
	// and retry.
	DefaultPollTimeout = 2 * time.Minute
	// DefaultMaxAttempts is how many times one call is tried (the first time and the retries) when the API
	// throttles it or fails in a way worth retrying.
	DefaultMaxAttempts = 5
	// DefaultMaxBackoff is the longest wait between two attempts of one call.
	DefaultMaxBackoff = 20 * time.Second
)

// Poll is how often and how long the aggregator polls a cloud provider's API, embedded in each cloud source's
// Options. Its flags (AddFlags) exist in the aggregator only: `fabricmap topology` polls once and leaves them
// zero.
type Poll struct {
	// Interval is the time between two polls (--<provider>-interval).
	Interval time.Duration
	// PollTimeout is the bound on one poll (--<provider>-poll-timeout); zero, when the flags are not
	// registered: the poller's default.
	PollTimeout time.Duration

	flags bool // AddFlags registered the flags: a zero PollTimeout was then given on purpose
}

// AddFlags registers --<provider>-interval and --<provider>-poll-timeout on fs, with DefaultInterval and
// DefaultPollTimeout and the provider's help texts.
func (p *Poll) AddFlags(fs *pflag.FlagSet, provider, intervalHelp, timeoutHelp string) {
	p.flags = true
	fs.DurationVar(&p.Interval, provider+"-interval", DefaultInterval, intervalHelp)
	fs.DurationVar(&p.PollTimeout, provider+"-poll-timeout", DefaultPollTimeout, timeoutHelp)
}

// Validate refuses a negative interval and a poll timeout that is negative, or zero when it came from the
// flags (a poll that would never be bounded), naming the provider's flags.
func (p Poll) Validate(provider string) error {
	var errs []error
	if p.Interval < 0 {
		errs = append(errs, fmt.Errorf("--%s-interval (%v) must not be negative", provider, p.Interval))
	}
	if p.PollTimeout < 0 || p.PollTimeout == 0 && p.flags {
		errs = append(errs, fmt.Errorf("--%s-poll-timeout (%v) must be positive", provider, p.PollTimeout))
	}
	return errors.Join(errs...)
}

// Retry bounds the retries of one call to a provider's API. It has no flags.
type Retry struct {
	// MaxAttempts is how many times one call is tried; zero: DefaultMaxAttempts.
	MaxAttempts int
	// MaxBackoff is the longest wait between two attempts; zero: DefaultMaxBackoff.
	MaxBackoff time.Duration
}

// Attempts returns MaxAttempts, or DefaultMaxAttempts when it is zero.
func (r Retry) Attempts() int { return cmp.Or(r.MaxAttempts, DefaultMaxAttempts) }

// Backoff returns MaxBackoff, or DefaultMaxBackoff when it is zero.
func (r Retry) Backoff() time.Duration { return cmp.Or(r.MaxBackoff, DefaultMaxBackoff) }

// Validate refuses negative bounds.
func (r Retry) Validate() error {
	if r.MaxAttempts < 0 || r.MaxBackoff < 0 {
		return fmt.Errorf("retries: max attempts (%d) and max backoff (%v) must not be negative", r.MaxAttempts, r.MaxBackoff)
	}
	return nil
}
