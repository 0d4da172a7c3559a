// Package cli holds what fabricmap's binaries share at start-up: logging and Kubernetes client configuration.
package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/fabricmap/fabricmap/internal/version"
)

// NewLogger returns a structured logger writing to stderr in the given format ("json" or "text") and level.
func NewLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want json or text", format)
	}
}

// RESTConfig loads the client configuration: the named kubeconfig file, else $KUBECONFIG or
// ~/.kube/config, else the in-cluster service account (ClusterFlags.RESTConfig with only a kubeconfig).
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	return ClusterFlags{Kubeconfig: kubeconfig}.RESTConfig()
}

// EnvOr returns the environment variable key, or def when it is unset or empty.
func EnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// APIRate is how fast a binary may talk to the API server (client-go's client-side rate limit).
type APIRate struct {
	// QPS is the sustained rate; Burst how many requests may go above it at once.
	QPS   float64
	Burst int
}

// AddFlags registers --kube-api-qps and --kube-api-burst with the given defaults; why says what needs the rate.
func (r *APIRate) AddFlags(fs *pflag.FlagSet, qps float64, burst int, why string) {
	fs.Float64Var(&r.QPS, "kube-api-qps", qps, "requests per second to the API server, sustained ("+why+")")
	fs.IntVar(&r.Burst, "kube-api-burst", burst, "requests to the API server allowed in a burst above --kube-api-qps")
}

// Apply sets the rate on cfg.
func (r APIRate) Apply(cfg *rest.Config) {
	cfg.QPS, cfg.Burst = float32(r.QPS), r.Burst
}

// Process holds the settings every fabricmap binary that talks to the API server shares: where the cluster
// is, how it logs, and (for those that register the flags) how fast it may talk.
type Process struct {
	// Kubeconfig is --kubeconfig; LogFormat and LogLevel are --log-format and --log-level.
	Kubeconfig, LogFormat, LogLevel string
	// Rate is --kube-api-qps and --kube-api-burst once Rate.AddFlags registered them; zero keeps RESTConfig's.
	Rate APIRate
}

// AddFlags registers --kubeconfig, --log-format and --log-level, and --version (which the binary's main acts
// on before it parses anything: version.PrintIfRequested).
func (p *Process) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.Kubeconfig, "kubeconfig", "", KubeconfigUsage)
	fs.StringVar(&p.LogFormat, "log-format", "json", "log format: json or text")
	fs.StringVar(&p.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	version.AddFlag(fs)
}

// Logger returns the logger the flags ask for.
func (p *Process) Logger() (*slog.Logger, error) { return NewLogger(p.LogFormat, p.LogLevel) }

// RESTConfig returns the client configuration the flags ask for, identified as userAgent, at Rate when set.
func (p *Process) RESTConfig(userAgent string) (*rest.Config, error) {
	cfg, err := RESTConfig(p.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = userAgent
	if p.Rate.QPS > 0 {
		p.Rate.Apply(cfg)
	}
	return cfg, nil
}
