package rdma

import (
	"context"
	"fmt"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// Name is the name the probe registers under.
const Name = "rdma"

// DefaultSysfsRoot is where sysfs is read when the configuration names no root.
const DefaultSysfsRoot = "/sys"

func init() {
	discovery.Register(Name, func(cfg discovery.Config) (discovery.Probe, error) {
		rules, err := ParseClassRules(cfg.RDMAClassRules)
		if err != nil {
			return nil, fmt.Errorf("RDMA class rules %q: %w", cfg.RDMAClassRules, err)
		}
		return New(cfg, Options{ClassRules: rules})
	})
}

// Options tune the probe beyond the shared discovery.Config.
type Options struct {
	// ClassRules give ports their class; the first rule that matches wins.
	ClassRules []ClassRule
	// DefaultClass is the class of ports no rule matches; empty means compute.
	DefaultClass v1alpha1.PortClass
}

// Validate checks the rules and the default class.
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
	return nil
}

// Probe is the RDMA probe. The registered factory builds it with default Options (every port compute).
type Probe struct {
	root string
	opts Options
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
	return &Probe{root: root, opts: opts}, nil
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

// Run scans the node and returns its RDMA devices as report objects. NearestGPU carries the GPU's PCI
// address, since the probe knows no GPU UUIDs; callers holding NVML data can rebuild the objects with
// ToAPI.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	rep, err := p.Scan(ctx)
	if err != nil {
		return discovery.Result{}, fmt.Errorf("rdma: %w", err)
	}
	if rep.NotApplicable != "" {
		return discovery.Result{NotApplicable: rep.NotApplicable}, nil
	}
	devs, truncated := ToAPI(rep.Devices, nil)
	warns := append([]string(nil), rep.Warnings...)
	warns = append(warns, truncated...)
	return discovery.Result{RDMADevices: devs, Warnings: warns}, nil
}
