package ufm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// DefaultPollTimeout is the default of --ufm-poll-timeout: the bound on one read of the whole fabric.
const DefaultPollTimeout = 2 * time.Minute

// SourceOptions are the settings of the UFM source, the same flags in the aggregator and the CLI. Credentials
// come from files (a mounted Secret), which the client reads again on every request, so a rotated Secret
// needs no restart.
type SourceOptions struct {
	// URL is UFM's address; empty: no UFM source.
	URL string
	// UsernameFile, PasswordFile and TokenFile hold the credentials (see Config).
	UsernameFile, PasswordFile, TokenFile string
	// Username is the user name as a value, set only by the CLI's deprecated --ufm-username.
	Username string
	// CAFile and InsecureSkipVerify set how UFM's certificate is checked (see Config).
	CAFile             string
	InsecureSkipVerify bool
	// Timeout bounds one request, MaxRetryAfter a Retry-After wait (see Config).
	Timeout, MaxRetryAfter time.Duration
	// Interval is the time between two polls and PollTimeout the bound on one (the aggregator's polling).
	Interval, PollTimeout time.Duration
	// Rules map hosts to node names and HCAs to compute or storage.
	Rules Rules
}

// AddFlags registers the UFM source's settings on fs: --ufm-url, the connection and the rules.
func (o *SourceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.URL, "ufm-url", "", "NVIDIA UFM address, e.g. https://ufm.example.com (empty: no UFM source)")
	fs.StringVar(&o.UsernameFile, "ufm-username-file", "", "file holding the UFM user name (basic authentication, with --ufm-password-file)")
	fs.StringVar(&o.PasswordFile, "ufm-password-file", "", "file holding the UFM password (basic authentication)")
	fs.StringVar(&o.TokenFile, "ufm-token-file", "", "file holding a UFM access token (instead of user name and password)")
	fs.StringVar(&o.CAFile, "ufm-ca-file", "", "PEM CA bundle that UFM's certificate chains to (besides the system's)")
	fs.BoolVar(&o.InsecureSkipVerify, "ufm-insecure-skip-verify", false, "accept any UFM certificate (logged as a warning): anyone on the path can read the credentials")
	fs.DurationVar(&o.Timeout, "ufm-timeout", DefaultTimeout, "bound on one UFM request (retried on failure)")
	fs.DurationVar(&o.MaxRetryAfter, "ufm-max-retry-after", DefaultMaxRetryAfter, "longest wait before a retry that a Retry-After header from UFM (429, 503) is honoured for")
	o.Rules.AddFlags(fs)
}

// AddPollFlags registers how often and how long the aggregator polls UFM: --ufm-interval and --ufm-poll-timeout.
func (o *SourceOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "ufm-interval", 5*time.Minute, "time between two reads of the fabric from UFM")
	fs.DurationVar(&o.PollTimeout, "ufm-poll-timeout", DefaultPollTimeout,
		"bound on one read of the fabric from UFM: every request, retry and Retry-After wait (it runs beside the tree rebuilds, never inside one)")
}

// Given reports whether a UFM source is configured (--ufm-url).
func (o *SourceOptions) Given() bool { return o.URL != "" }

// Remote reports whether any connection setting is given, which only a live UFM uses.
func (o *SourceOptions) Remote() bool {
	return o.Username != "" || o.UsernameFile != "" || o.PasswordFile != "" || o.TokenFile != "" || o.CAFile != "" || o.InsecureSkipVerify
}

// Client returns a client of the UFM at URL, logging to log.
func (o *SourceOptions) Client(log *slog.Logger) (*Client, error) {
	c, err := NewClient(Config{
		BaseURL: o.URL, Username: o.Username, UsernameFile: o.UsernameFile, PasswordFile: o.PasswordFile, TokenFile: o.TokenFile,
		CAFile: o.CAFile, InsecureSkipVerify: o.InsecureSkipVerify, Timeout: o.Timeout, MaxRetryAfter: o.MaxRetryAfter,
		Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("UFM source: %w", err)
	}
	return c, nil
}

// Source returns the polled UFM source, or nil when --ufm-url is not set.
func (o *SourceOptions) Source(log *slog.Logger) (*Source, error) {
	if !o.Given() {
		return nil, nil
	}
	opts, err := o.Rules.Options()
	if err != nil {
		return nil, err
	}
	if o.PollTimeout <= 0 || o.MaxRetryAfter <= 0 {
		return nil, fmt.Errorf("UFM source: --ufm-poll-timeout (%v) and --ufm-max-retry-after (%v) must be positive", o.PollTimeout, o.MaxRetryAfter)
	}
	c, err := o.Client(log.With("source", Name))
	if err != nil {
		return nil, err
	}
	return &Source{Client: c, PollTimeout: o.PollTimeout, Options: opts, Log: log}, nil
}

// Source is NVIDIA UFM as a polled source: the whole InfiniBand fabric (hosts, switches, cables) read through
// its REST API. An answer without a single switch is refused, so a UFM that lost its fabric view (or answers
// garbage that parses) never empties the tree; the last good answer stays in use.
type Source struct {
	// Client reads UFM.
	Client *Client
	// PollTimeout bounds one poll's requests, retries and Retry-After waits (the conversion of a fabric read in
	// time is not cut short); the poller's default when zero.
	PollTimeout time.Duration
	// Options maps hosts to node names and HCAs to compute or storage.
	Options Options
	// Log receives, as warnings, the hosts UFM knows but no node name was found for, the gateways, routers
	// and untyped systems left out (their count and names), and the other systems, ports and links left out
	// (ends of no known system, loopbacks): each time those lists change, not at every poll.
	Log *slog.Logger

	mu    sync.Mutex
	said  string        // the warnings last logged
	notes []ib.HostNote // the hosts the last good evidence re-identified or left out
}

// Notes returns the hosts the last good evidence re-identified or left out, with the reason (sources.Noter).
func (s *Source) Notes() []ib.HostNote {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.notes)
}

// Name returns Name.
func (s *Source) Name() string { return Name }

// Timeout returns PollTimeout, the bound on one poll.
func (s *Source) Timeout() time.Duration { return s.PollTimeout }

// Merge is the source's merge rule, Merge.
func (s *Source) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return Merge(merged, in)
}

// Merge is how UFM's evidence joins that of higher-priority sources: it places the nodes they do not know
// and adds its switch links; a node it places behind other switches is a conflict the earlier source wins.
func Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return topology.Merge(merged, in)
}

// news reports whether the report's unmapped and left-out items differ from those last logged.
func (s *Source) news(r Report) bool {
	var b strings.Builder
	for _, u := range r.Unmapped {
		fmt.Fprintln(&b, u.String())
	}
	b.WriteString("--\n")
	for _, item := range r.Skipped {
		fmt.Fprintln(&b, item)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.String() == s.said {
		return false
	}
	s.said = b.String()
	return true
}

// leftOutAttrs are the attributes of the warning that lists the systems left out: their count, the count of
// each type, and the first 20 by type and name ("gateway skyway-01 (0002c90300e4a000)").
func leftOutAttrs(systems []LeftOutSystem) []any {
	attrs := []any{"count", len(systems)}
	byType := map[string]int{}
	for _, sys := range systems {
		byType[cmp.Or(sys.Type, "untyped")]++
	}
	for _, kind := range slices.Sorted(maps.Keys(byType)) {
		attrs = append(attrs, kind, byType[kind])
	}
	first := make([]string, 0, min(len(systems), 20))
	for _, sys := range systems[:min(len(systems), 20)] {
		first = append(first, topology.Printable(fmt.Sprintf("%s %s (%s)", cmp.Or(sys.Type, "untyped"), strings.TrimSpace(sys.SystemName), sys.SystemGUID)))
	}
	return append(attrs, "first", first)
}

// Evidence reads the fabric from UFM and converts it; ctx carries the poll's deadline.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	f, err := s.Client.Fabric(ctx)
	if err != nil {
		return topology.Input{}, err
	}
	in, report := Evidence(f, s.Options)
	if len(in.Nodes) == 0 && len(in.SwitchLinks) == 0 {
		return topology.Input{}, errors.New("UFM answered a fabric with no host cabled to a switch; keeping the last good one")
	}
	s.mu.Lock()
	s.notes = report.Notes()
	s.mu.Unlock()
	if s.Log != nil && s.news(report) {
		if len(report.Unmapped) > 0 {
			names := make([]string, 0, min(len(report.Unmapped), 20))
			for _, u := range report.Unmapped[:min(len(report.Unmapped), 20)] {
				names = append(names, topology.Printable(u.String()))
			}
			s.Log.Warn("UFM hosts without a Kubernetes node name", "count", len(report.Unmapped), "first", names)
		}
		if len(report.LeftOut) > 0 {
			s.Log.Warn("UFM gateways, routers and untyped systems left out: neither switches nor hosts to place", leftOutAttrs(report.LeftOut)...)
		}
		if other := report.Skipped[len(report.LeftOut):]; len(other) > 0 { // the left-out systems come first
			first := make([]string, 0, min(len(other), 20))
			for _, item := range other[:min(len(other), 20)] {
				first = append(first, topology.Printable(item))
			}
			s.Log.Warn("UFM systems, ports and links left out (ends of no known system, loopbacks, host-to-host cables)",
				"count", len(other), "first", first)
		}
	}
	return in, nil
}
