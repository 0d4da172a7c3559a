package cloud

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// Name is the name the probe registers under.
const Name = "cloud"

// DefaultTimeout bounds each metadata request.
const DefaultTimeout = 2 * time.Second

// runRequests bounds a whole run, in requests of Options.Timeout: the most one provider needs (4, gcp) and a
// failed first request to each of the others, when --cloud-metadata=on asks them in turn.
const runRequests = 6

// Options configure the probe.
type Options struct {
	// SysfsRoot is where sysfs is mounted, whose DMI says which cloud the node is on; "/sys" when empty.
	SysfsRoot string
	// Mode is one of Modes; empty means ModeAuto.
	Mode string
	// Endpoint is the metadata service's base URL; empty means DefaultEndpoint.
	Endpoint string
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
}

// Probe reads the node's instance metadata. It keeps its HTTP clients (and AWS's session token) from run to
// run.
type Probe struct {
	opts  Options
	http  *http.Client
	aws   *awsClient
	fetch map[v1alpha1.CloudProvider]func(context.Context) (*v1alpha1.CloudInstance, []string, error)
}

// order is the order in which --cloud-metadata=on asks the providers when DMI names none.
var order = []v1alpha1.CloudProvider{v1alpha1.CloudAWS, v1alpha1.CloudGCP, v1alpha1.CloudOCI}

// New builds the probe; it refuses an unknown mode, a negative timeout or an endpoint that is not an http URL.
func New(opts Options) (*Probe, error) {
	if opts.SysfsRoot == "" {
		opts.SysfsRoot = discovery.DefaultSysfsRoot
	}
	if opts.Mode == "" {
		opts.Mode = ModeAuto
	}
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultEndpoint
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	opts.Endpoint = strings.TrimRight(opts.Endpoint, "/")
	switch {
	case !slices.Contains(Modes, opts.Mode):
		return nil, fmt.Errorf("cloud: metadata mode %q: want one of %s", opts.Mode, strings.Join(Modes, ", "))
	case opts.Timeout < 0:
		return nil, fmt.Errorf("cloud: request timeout %s is negative", opts.Timeout)
	case !strings.HasPrefix(opts.Endpoint, "http://") && !strings.HasPrefix(opts.Endpoint, "https://"):
		return nil, fmt.Errorf("cloud: metadata endpoint %q is not an http:// URL", opts.Endpoint)
	}
	p := &Probe{opts: opts, http: newHTTPClient(opts.Timeout)}
	p.aws = newAWSClient(opts.Endpoint, p.http)
	p.fetch = map[v1alpha1.CloudProvider]func(context.Context) (*v1alpha1.CloudInstance, []string, error){
		v1alpha1.CloudAWS: p.fetchAWS,
		v1alpha1.CloudGCP: p.fetchGCP,
		v1alpha1.CloudOCI: p.fetchOCI,
	}
	return p, nil
}

// Name returns "cloud".
func (p *Probe) Name() string { return Name }

// Run reads the instance metadata of the provider the mode and DMI name. A node on no known cloud (in auto
// mode), or with the probe off, is not applicable, without any request.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	providers, why := p.providers()
	if len(providers) == 0 {
		return discovery.Result{NotApplicable: why}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, runRequests*p.opts.Timeout)
	defer cancel()
	var errs []error
	for _, provider := range providers {
		inst, warns, err := p.fetch[provider](ctx)
		if err == nil {
			var more []string
			inst, more, err = bound(inst)
			warns = append(warns, more...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s metadata at %s: %w", provider, p.opts.Endpoint, err))
			continue
		}
		return discovery.Result{Cloud: inst, Warnings: warns}, nil
	}
	if len(providers) > 1 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return discovery.Result{}, fmt.Errorf("cloud: DMI names no known cloud and no provider's metadata service answered: %s", strings.Join(msgs, "; "))
	}
	return discovery.Result{}, fmt.Errorf("cloud: %w", errs[0])
}

// providers are the providers to ask, in order, as the mode and DMI say; none, with the reason, when the node is
// not applicable.
func (p *Probe) providers() ([]v1alpha1.CloudProvider, string) {
	switch p.opts.Mode {
	case ModeOff:
		return nil, "instance metadata is off (--cloud-metadata=off)"
	case ModeAuto, ModeOn:
		found, why := Detect(p.opts.SysfsRoot)
		switch {
		case found != "":
			return []v1alpha1.CloudProvider{found}, ""
		case p.opts.Mode == ModeAuto:
			return nil, "not on a known cloud: " + why
		}
		return order, ""
	}
	return []v1alpha1.CloudProvider{v1alpha1.CloudProvider(p.opts.Mode)}, ""
}
