package gcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/googleapis/gax-go/v2"
	"github.com/spf13/pflag"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// Options are the Google Cloud source's settings: the same flags in the aggregator and `fabricmap topology`.
type Options struct {
	// Project is the project whose instances are read (--from-gcp); empty: no Google Cloud source.
	Project string
	// Zones are the zones whose instances are listed (--gcp-zones); empty: the zones of the Nodes' providerIDs.
	Zones []string
	// Endpoint is Compute Engine's base URL as the SDK takes it (…/compute/v1/); empty: Google's. An http://
	// endpoint (a stand-in, or a local proxy that adds credentials) is sent no credentials.
	Endpoint string
	// CredentialsFile is a service account key file; empty: Application Default Credentials (Workload
	// Identity on GKE).
	CredentialsFile string
	// Poll is the aggregator's polling: --gcp-interval and --gcp-poll-timeout (AddPollFlags).
	cloudsource.Poll
}

// AddFlags registers the source's settings on fs: --from-gcp, --gcp-zones, --gcp-endpoint, --gcp-credentials-file.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Project, "from-gcp", "", "Google Cloud project whose Compute Engine instances give the Nodes' cluster, block and sub-block (physicalHostTopology) as evidence (empty: none)")
	fs.StringSliceVar(&o.Zones, "gcp-zones", nil, "Google Cloud zones whose instances are listed, e.g. us-central1-a,us-central1-b (empty: the zones of the Nodes' gce:// providerIDs)")
	fs.StringVar(&o.Endpoint, "gcp-endpoint", "", "Compute Engine API base URL, e.g. https://compute.googleapis.com/compute/v1/ (empty: Google's; an http:// URL is sent no credentials)")
	fs.StringVar(&o.CredentialsFile, "gcp-credentials-file", "", "Google Cloud service account key file (empty: Application Default Credentials, e.g. GKE Workload Identity)")
}

// AddPollFlags registers how often and how long the aggregator reads Compute Engine: --gcp-interval and
// --gcp-poll-timeout.
func (o *Options) AddPollFlags(fs *pflag.FlagSet) {
	o.Poll.AddFlags(fs, Name, "time between two reads of the instances' topology from Google Cloud",
		"bound on one read of the instances' topology from Google Cloud: every page, retry and backoff")
}

// Given reports whether the flags configure the source (--from-gcp).
func (o *Options) Given() bool { return o.Project != "" }

// Source returns the Google Cloud source, reading Nodes with list (which may be left nil and given later with
// UseNodes), or nil, nil when --from-gcp is not set. It refuses invalid settings, and fails when no
// credentials are found.
func (o *Options) Source(log *slog.Logger, list nodes.Lister) (*Source, error) {
	if !o.Given() {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("source", Name)
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("Google Cloud source: %w", err)
	}
	svc, err := o.service(context.Background(), log)
	if err != nil {
		return nil, fmt.Errorf("Google Cloud source: the Compute Engine client (credentials: %s): %w", o.credentialsName(), err)
	}
	return &Source{
		Instances: NewInstances(svc), BasePath: svc.BasePath, Project: o.Project, Zones: o.zones(), Base: cloudsource.Base{Nodes: list, PollTimeout: o.PollTimeout},
		Attempts: DefaultAttempts, Backoff: DefaultBackoff(), Log: log,
	}, nil
}

// validate refuses a project, zone or endpoint Compute Engine cannot be asked with, a credentials file that
// cannot be read, and polling that never ends.
func (o *Options) validate() error {
	if strings.ContainsAny(o.Project, "/ \t\r\n") {
		return fmt.Errorf("--from-gcp %q: want a project ID, such as my-project", o.Project)
	}
	for _, z := range o.zones() {
		if msgs := validation.IsDNS1123Label(z); len(msgs) > 0 {
			return fmt.Errorf("--gcp-zones: %q is no zone name (such as us-central1-a): %s", z, msgs[0])
		}
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		switch {
		case err != nil:
			return fmt.Errorf("--gcp-endpoint %q: %w", o.Endpoint, err)
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			return fmt.Errorf("--gcp-endpoint %q: want an http:// or https:// URL, such as https://compute.googleapis.com/compute/v1/", o.Endpoint)
		case u.Scheme == "http" && o.CredentialsFile != "":
			return fmt.Errorf("--gcp-endpoint %q is plain http: the tokens of --gcp-credentials-file would travel in clear text", o.Endpoint)
		}
	}
	if o.CredentialsFile != "" {
		f, err := os.Open(o.CredentialsFile)
		if err != nil {
			return fmt.Errorf("--gcp-credentials-file: %w", err)
		}
		_ = f.Close()
	}
	return o.Poll.Validate(Name)
}

// zones returns Zones without empty entries and duplicates, in their order.
func (o *Options) zones() []string {
	var out []string
	seen := map[string]bool{}
	for _, z := range o.Zones {
		if z = strings.TrimSpace(z); z != "" && !seen[z] {
			seen[z] = true
			out = append(out, z)
		}
	}
	return out
}

// endpoint returns Endpoint with the trailing "/" the SDK resolves its paths against.
func (o *Options) endpoint() string {
	if o.Endpoint == "" || strings.HasSuffix(o.Endpoint, "/") {
		return o.Endpoint
	}
	return o.Endpoint + "/"
}

// credentialsName says where credentials come from, for errors.
func (o *Options) credentialsName() string {
	switch {
	case o.CredentialsFile != "":
		return "--gcp-credentials-file " + o.CredentialsFile
	case strings.HasPrefix(o.Endpoint, "http://"):
		return "none, plain http"
	default:
		return "Application Default Credentials"
	}
}

// clientOptions are the SDK's options for the settings: the endpoint, and the credentials (a key file, none
// over plain http, else Application Default Credentials, which the SDK finds itself).
func (o *Options) clientOptions(log *slog.Logger) []option.ClientOption {
	opts := []option.ClientOption{option.WithUserAgent("fabricmap"), option.WithScopes(compute.ComputeReadonlyScope)}
	if ep := o.endpoint(); ep != "" {
		opts = append(opts, option.WithEndpoint(ep))
	}
	switch {
	case o.CredentialsFile != "":
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, o.CredentialsFile))
	case strings.HasPrefix(o.Endpoint, "http://"):
		log.Warn("the Compute Engine endpoint is plain http: no credentials are sent", "endpoint", o.Endpoint)
		opts = append(opts, option.WithoutAuthentication())
	}
	return opts
}

// service makes the Compute Engine client of the settings, its answers read through cloudsource.CapTransport
// (a body past cloudsource.MaxBodyBytes fails the page): the SDK's authenticated HTTP client (htransport),
// wrapped, and handed back to the service, which then takes the endpoint only.
func (o *Options) service(ctx context.Context, log *slog.Logger) (*compute.Service, error) {
	hc, _, err := htransport.NewClient(ctx, o.clientOptions(log)...)
	if err != nil {
		return nil, err
	}
	capped := *hc
	capped.Transport = cloudsource.CapTransport(Name, cloudsource.MaxBodyBytes, hc.Transport)
	opts := []option.ClientOption{option.WithHTTPClient(&capped)}
	if ep := o.endpoint(); ep != "" {
		opts = append(opts, option.WithEndpoint(ep))
	}
	return compute.NewService(ctx, opts...)
}

// DefaultAttempts is how many times one page is asked for before a throttled or failing answer fails the poll.
const DefaultAttempts = 5

// DefaultBackoff is the wait between two attempts: up to 1s, then 2s, 4s, … up to 30s, with jitter (gax's).
func DefaultBackoff() gax.Backoff {
	return gax.Backoff{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2}
}
