package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// ufmOptions are the flags of the UFM source. Credentials come only from files (a mounted Secret), which the
// client reads again on every request, so a rotated Secret needs no restart.
type ufmOptions struct {
	url, usernameFile, passwordFile, tokenFile, caFile string
	insecureSkipVerify                                 bool
	interval, timeout, pollTimeout, maxRetryAfter      time.Duration
	rules                                              ufm.Rules
}

func (o *ufmOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.url, "ufm-url", "", "NVIDIA UFM address, e.g. https://ufm.example.com (empty: no UFM source)")
	fs.StringVar(&o.usernameFile, "ufm-username-file", "", "file holding the UFM user name (basic authentication)")
	fs.StringVar(&o.passwordFile, "ufm-password-file", "", "file holding the UFM password (basic authentication)")
	fs.StringVar(&o.tokenFile, "ufm-token-file", "", "file holding a UFM access token (instead of user name and password)")
	fs.StringVar(&o.caFile, "ufm-ca-file", "", "PEM CA bundle that UFM's certificate chains to")
	fs.BoolVar(&o.insecureSkipVerify, "ufm-insecure-skip-verify", false, "accept any UFM certificate (logged as a warning)")
	fs.DurationVar(&o.interval, "ufm-interval", 5*time.Minute, "time between two reads of the fabric from UFM")
	fs.DurationVar(&o.timeout, "ufm-timeout", ufm.DefaultTimeout, "bound on one UFM request")
	fs.DurationVar(&o.pollTimeout, "ufm-poll-timeout", aggregator.DefaultPollTimeout,
		"bound on one read of the fabric from UFM: every request, retry and Retry-After wait (it runs beside the tree rebuilds, never inside one)")
	fs.DurationVar(&o.maxRetryAfter, "ufm-max-retry-after", ufm.DefaultMaxRetryAfter, "longest wait before a retry that a Retry-After header from UFM (429, 503) is honoured for")
	o.rules.AddFlags(fs)
}

// sources returns the UFM source when --ufm-url is set.
func (o *ufmOptions) sources(log *slog.Logger) ([]aggregator.SourceSpec, error) {
	if o.url == "" {
		return nil, nil
	}
	opts, err := o.rules.Options()
	if err != nil {
		return nil, err
	}
	if o.pollTimeout <= 0 || o.maxRetryAfter <= 0 {
		return nil, fmt.Errorf("UFM source: --ufm-poll-timeout (%v) and --ufm-max-retry-after (%v) must be positive", o.pollTimeout, o.maxRetryAfter)
	}
	c, err := ufm.NewClient(ufm.Config{
		BaseURL: o.url, UsernameFile: o.usernameFile, PasswordFile: o.passwordFile, TokenFile: o.tokenFile,
		CAFile: o.caFile, InsecureSkipVerify: o.insecureSkipVerify, Timeout: o.timeout, MaxRetryAfter: o.maxRetryAfter,
		Logger: log.With("source", ufm.Source),
	})
	if err != nil {
		return nil, fmt.Errorf("UFM source: %w", err)
	}
	src := &aggregator.UFMSource{Client: c, PollTimeout: o.pollTimeout, Options: opts, Log: log}
	return []aggregator.SourceSpec{{Source: src, Interval: o.interval}}, nil
}
