package nvml

import (
	"context"
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/fabricmap/fabricmap/discovery"
)

// ProbeName is the name the probe registers under and reports its condition as.
const ProbeName = "nvml"

// Probe inventories a node's GPUs through NVML. It is safe to Run repeatedly; each run initialises NVML
// and shuts it down again.
type Probe struct {
	lib       gonvml.Interface
	libName   string
	sysfsRoot string
	// fabricV reads a device's versioned fabric info. ok is false when the device cannot answer the
	// versioned call at all (see versionedFabricInfo); tests replace it to exercise the versioned path.
	fabricV func(dev gonvml.Device) (info gonvml.GpuFabricInfo_v2, ret gonvml.Return, ok bool)
}

var _ discovery.Probe = (*Probe)(nil)

// New builds a probe from opts. It does not touch NVML: the library is loaded by Run.
func New(opts Options) *Probe {
	p := &Probe{
		lib:       opts.Library,
		libName:   opts.LibraryPath,
		sysfsRoot: opts.SysfsRoot,
		fabricV:   versionedFabricInfo,
	}
	if p.libName == "" {
		p.libName = "libnvidia-ml.so.1"
	}
	if p.sysfsRoot == "" {
		p.sysfsRoot = discovery.DefaultSysfsRoot
	}
	if p.lib == nil {
		if opts.LibraryPath != "" {
			p.lib = gonvml.New(gonvml.WithLibraryPath(opts.LibraryPath))
		} else {
			p.lib = gonvml.New()
		}
	}
	return p
}

// Name returns "nvml".
func (p *Probe) Name() string { return ProbeName }

// Run inventories the node's GPUs and returns them as a report fragment. NVLink peers, which the report has
// no field for, are dropped here; use Inventory to see them.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	inv, err := p.Inventory(ctx)
	if err != nil {
		return discovery.Result{}, err
	}
	return inv.Result(), nil
}

// Inventory initialises NVML, reads every GPU, derives the node's NVLink domain and shuts NVML down again.
// A missing library, an unloaded driver or a node without GPUs yields an Inventory with NotApplicable set
// and a nil error.
func (p *Probe) Inventory(ctx context.Context) (*Inventory, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nvml probe: %w", err)
	}
	switch ret := p.lib.Init(); ret {
	case gonvml.SUCCESS:
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return &Inventory{NotApplicable: fmt.Sprintf("NVML library %s not found (no NVIDIA driver installed?)", p.libName)}, nil
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return &Inventory{NotApplicable: "NVIDIA kernel driver is not loaded"}, nil
	default:
		return nil, fmt.Errorf("initialise NVML: %w", ret)
	}

	inv, err := p.collect(ctx)
	// Shut down on every path after a successful Init, so the library's reference count returns to zero.
	if ret := p.lib.Shutdown(); ret != gonvml.SUCCESS && err == nil {
		inv.Warnings = append(inv.Warnings, fmt.Sprintf("shut down NVML: %v", ret))
	}
	if err != nil {
		return nil, err
	}
	return inv, nil
}
