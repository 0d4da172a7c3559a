package rdma

import (
	"context"
	"fmt"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// Name is the name the probe registers under.
const Name = "rdma"

// DefaultSysfsRoot is where sysfs is read when the configuration names no root.
const DefaultSysfsRoot = discovery.DefaultSysfsRoot

// Options tune the probe beyond the shared discovery.Config (Settings, from the flags, make them).
type Options struct {
	// ClassRules give ports their class; the first rule that matches wins.
	ClassRules []ClassRule
	// DefaultClass is the class of ports no rule matches; empty means compute.
	DefaultClass v1alpha1.PortClass
	// Health tunes how Run judges link health; the zero value means DefaultLinkHealth.
	Health LinkHealthConfig
	// Now is Run's clock for counter rates; time.Now when nil.
	Now func() time.Time
	// CharDevices makes Scan read each device's character devices (Device.CharDevices) from rdmamap. The
	// report has no field for them, so the registered probe leaves it off: rdmamap reads the two classes'
	// folders three times per device, a quarter of a run's cost on a DGX.
	CharDevices bool
}

// health is o.Health, or the defaults when it is the zero value.
func (o Options) health() LinkHealthConfig {
	if o.Health.ErrorsPerHour == nil && o.Health.FlapCount == 0 && o.Health.Window == 0 {
		return DefaultLinkHealth()
	}
	return o.Health
}

// Validate checks the rules, the default class and the link-health settings.
func (o Options) Validate() error {
	switch o.DefaultClass {
	case "", v1alpha1.PortClassCompute, v1alpha1.PortClassStorage:
	default:
		return fmt.Errorf("rdma: default class %q is neither %q nor %q", o.DefaultClass,
			v1alpha1.PortClassCompute, v1alpha1.PortClassStorage)
	}
	for i, r := range o.ClassRules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("rdma: rule %d: %w", i+1, err)
		}
	}
	if err := o.health().Validate(); err != nil {
		return fmt.Errorf("rdma: %w", err)
	}
	return nil
}

// Probe is the RDMA probe. The registered probe is built by Settings, from the --rdma-class-rules and --link-*
// flags.
// It remembers its ports' counters from run to run, to judge their link health.
type Probe struct {
	root  string
	opts  Options
	judge *linkJudge
}

// New builds the probe for cfg.SysfsRoot ("/sys" when empty).
func New(cfg discovery.Config, opts Options) (*Probe, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	root := cfg.SysfsRoot
	if root == "" {
		root = DefaultSysfsRoot
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Probe{root: root, opts: opts, judge: newLinkJudge(opts.health())}, nil
}

// Name returns "rdma".
func (p *Probe) Name() string { return Name }

// Root returns the sysfs root the probe reads.
func (p *Probe) Root() string { return p.root }

// Scan reads the node's RDMA devices with their Go-level detail (GID types, the nearest GPU's PCI address
// and how near it is), for callers that need more than the report fragment Run returns.
func (p *Probe) Scan(ctx context.Context) (Report, error) {
	return Scan(ctx, p.root, p.opts)
}

// Run scans the node and returns its physical RDMA devices as report objects, each port with its link health
// judged against the probe's earlier runs (Options.Health; Since is the caller's to stamp). NearestGPU
// carries the GPU's PCI address, since the probe knows no GPU UUIDs; callers holding NVML data can rebuild
// the objects with ToAPI.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	rep, err := p.Scan(ctx)
	if err != nil {
		return discovery.Result{}, fmt.Errorf("rdma: %w", err)
	}
	if rep.NotApplicable != "" {
		return discovery.Result{NotApplicable: rep.NotApplicable}, nil
	}
	devs, truncated := ToAPI(rep.Devices, nil)
	health := p.judge.judgeAll(rep.Devices, p.opts.Now())
	for i := range devs {
		for j := range devs[i].Ports {
			devs[i].Ports[j].Health = health[portKey(devs[i].Name, int(devs[i].Ports[j].Number))]
		}
	}
	warns := append([]string(nil), rep.Warnings...)
	warns = append(warns, truncated...)
	return discovery.Result{RDMADevices: devs, Warnings: warns}, nil
}
