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
	// URL is UFM's address; empty: no live UFM.
	URL string
	// Dump is a folder of UFM's saved answers (see LoadDump) read instead of a live UFM: the CLI's
	// --from-ufm-dump; the aggregator reads a live UFM only.
	Dump string
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
	fs.DurationVar(&o.PollTimeout, "ufm-poll-timeout", DefaultPollTimeout,
		"bound on one read of the fabric from UFM: every request, retry and Retry-After wait (in the aggregator it runs beside the tree rebuilds, never inside one)")
	o.Rules.AddFlags(fs)
}

// AddPollFlags registers how often the aggregator polls UFM: --ufm-interval.
func (o *SourceOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "ufm-interval", 5*time.Minute, "time between two reads of the fabric from UFM")
}

// Given reports whether a UFM source is configured (--ufm-url, or a dump).
func (o *SourceOptions) Given() bool { return o.URL != "" || o.Dump != "" }

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

// Source returns the polled UFM source, or nil when neither --ufm-url nor a dump is set.
func (o *SourceOptions) Source(log *slog.Logger) (*Source, error) {
	if !o.Given() {
		return nil, nil
	}
	opts, err := o.Rules.Options()
	if err != nil {
		return nil, err
	}
	switch {
	case o.Dump != "" && o.URL != "":
		return nil, errors.New("UFM source: give a live UFM (--ufm-url, --from-ufm) or a dump of its answers (--from-ufm-dump), not both")
	case o.Dump != "" && o.Remote():
		return nil, errors.New("UFM source: the --ufm-* connection flags go with --from-ufm (a live UFM), not with --from-ufm-dump")
	case o.Dump != "":
		return &Source{Dump: o.Dump, Options: opts, Log: log.With("source", Name)}, nil
	}
	if o.PollTimeout <= 0 || o.MaxRetryAfter <= 0 {
		return nil, fmt.Errorf("UFM source: --ufm-poll-timeout (%v) and --ufm-max-retry-after (%v) must be positive", o.PollTimeout, o.MaxRetryAfter)
	}
	c, err := o.Client(log.With("source", Name))
	if err != nil {
		return nil, err
	}
	return &Source{Client: c, PollTimeout: o.PollTimeout, Options: opts, Log: log.With("source", Name)}, nil
}

// Source is NVIDIA UFM as a polled source: the whole InfiniBand fabric (hosts, switches, cables) read through
// its REST API. An answer without a single switch is refused, so a UFM that lost its fabric view (or answers
// garbage that parses) never empties the tree; the last good answer stays in use.
type Source struct {
	// Client reads UFM.
	Client *Client
	// Dump, when set, is a folder of saved answers read instead of Client (see LoadDump).
	Dump string
	// PollTimeout bounds one poll's requests, retries and Retry-After waits (the conversion of a fabric read in
	// time is not cut short); the poller's default when zero.
	PollTimeout time.Duration
	// Options maps hosts to node names and HCAs to compute or storage.
	Options Options
	// Log receives, as warnings, the hosts UFM knows but no node name was found for, the gateways, routers
	// and untyped systems left out (their count, types and names; gateways UFM lists as hosts among them),
	// the other systems, ports and links left out (ends of no known system, loopbacks), and the leaves that
	// look like storage or management rails (Report.StorageRails, with the --ufm-storage-devices value that
	// keeps them out): each time those lists change, not at every poll.
	Log *slog.Logger

	mu       sync.Mutex
	said     string        // the warnings last logged
	notes    []ib.HostNote // the hosts the last good evidence re-identified or left out
	unplaced string        // what the last good evidence's fabric lacks to place a node (see Unplaced)
}

// Unplaced says what the last good evidence's fabric lacks when it proves to place no node (sources.Explainer).
func (s *Source) Unplaced() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unplaced
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
	b.WriteString("--\n")
	for _, rail := range r.StorageRails {
		fmt.Fprintln(&b, rail.String())
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
// each type, and the first 20 by type and name ("gateway skyway-01 (0002c90300e4a000)"; "gateway
// MF0;gw-1:MSX6710/GW (0002c90300b0c001, listed by UFM as a host)" for one UFM lists as a host).
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
		listed := ""
		if sys.ListedAs != "" {
			listed = ", listed by UFM as a " + sys.ListedAs
		}
		first = append(first, topology.Printable(fmt.Sprintf("%s %s (%s%s)", cmp.Or(sys.Type, "untyped"), strings.TrimSpace(sys.SystemName), sys.SystemGUID, listed)))
	}
	return append(attrs, "first", first)
}

// Evidence reads the fabric from UFM and converts it; ctx carries the poll's deadline.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	f, err := s.fabric(ctx)
	if err != nil {
		return topology.Input{}, err
	}
	if len(f.Systems) == 0 {
		return topology.Input{}, fmt.Errorf("%w: UFM lists no system: is it the right address, or a dump of /resources/systems?", topology.ErrNothingUsable)
	}
	in, report := Evidence(f, s.Options)
	unplaced := unplacedWhy(f, report)
	if len(in.Nodes) == 0 && len(in.SwitchLinks) == 0 {
		return topology.Input{}, fmt.Errorf("%w: %s", topology.ErrNothingUsable, unplaced)
	}
	s.mu.Lock()
	s.notes, s.unplaced = report.Notes(), unplaced
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
		if len(report.StorageRails) > 0 {
			first := make([]string, 0, len(report.StorageRails))
			for _, rail := range report.StorageRails {
				first = append(first, topology.Printable(rail.String()))
			}
			s.Log.Warn("UFM leaves that join otherwise separate groups of hosts through one HCA port of each, as a storage or management rail does: "+
				"their hosts share one compute domain unless --ufm-storage-devices names those HCAs", "count", len(report.StorageRails), "first", first)
		}
		if other := report.Skipped[len(report.LeftOut):]; len(other) > 0 { // the left-out systems come first
			first := make([]string, 0, min(len(other), 20))
			for _, item := range other[:min(len(other), 20)] {
				first = append(first, topology.Printable(item))
			}
			s.Log.Warn("UFM systems, ports and links left out (ends of no known system, loopbacks, host-to-host cables)",
				"count", len(other), "first", first)
		}
		if len(report.Reidentified) > 0 {
			first := make([]string, 0, min(len(report.Reidentified), 20))
			for _, n := range report.Reidentified[:min(len(report.Reidentified), 20)] {
				first = append(first, topology.Printable(n.String()))
			}
			s.Log.Warn("UFM hosts not taken by their name that became nodes all the same", "count", len(report.Reidentified), "first", first)
		}
	}
	return in, nil
}

// fabric reads the dump, or asks UFM.
func (s *Source) fabric(ctx context.Context) (*Fabric, error) {
	if s.Dump != "" {
		return readFabric(ctx, dumpDir(s.Dump), Limits{})
	}
	f, err := s.Client.Fabric(ctx)
	if errors.Is(err, ErrCredentialsRejected) {
		return nil, fmt.Errorf("%w; check --ufm-username-file and --ufm-password-file, or --ufm-token-file", err)
	}
	return f, err
}

// unplacedWhy says what is missing from a UFM answer that cables no node to a switch.
func unplacedWhy(fab *Fabric, rep Report) string {
	hosts := 0
	for _, s := range fab.Systems {
		if s.Type == "host" {
			hosts++
		}
	}
	switch {
	case hosts == 0:
		return fmt.Sprintf("UFM lists no host: none of its %d systems is of type \"host\"", len(fab.Systems))
	case len(fab.Links) == 0:
		return fmt.Sprintf("UFM lists no link (%d systems, %d hosts): is the fabric discovered yet?", len(fab.Systems), hosts)
	case len(rep.Unmapped) > 0: // every host cabled to a switch, since none gave a node
		return fmt.Sprintf("none of the %d UFM hosts cabled to a switch maps to a usable node name (see the warnings; --ufm-node-name-regexp sets the rule)",
			len(rep.Unmapped))
	}
	return fmt.Sprintf("none of UFM's %d links joins a host's HCA to a switch (%d systems, %d hosts; what was left out is in the warnings)",
		len(fab.Links), len(fab.Systems), hosts)
}
