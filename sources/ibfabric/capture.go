package ibfabric

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// CaptureOptions are the settings of the capture source, an ibnetdiscover capture of the whole fabric in a
// file: the same flags in the aggregator and the CLI.
type CaptureOptions struct {
	// File is the capture's path; empty: no capture source.
	File string
	// Recheck is how often the aggregator looks at the file for changes.
	Recheck time.Duration
}

// AddFlags registers --capture-file on fs.
func (o *CaptureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "capture-file", "", "ibnetdiscover capture of the whole fabric (e.g. a mounted ConfigMap): gives the tiers above the leaves (empty: none)")
}

// AddPollFlags registers how often the aggregator looks at the capture: --capture-recheck.
func (o *CaptureOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Recheck, "capture-recheck", time.Minute, "how often the capture file is checked for changes")
}

// Given reports whether a capture is configured (--capture-file).
func (o *CaptureOptions) Given() bool { return o.File != "" }

// Source returns the capture source, or nil when --capture-file is not set.
func (o *CaptureOptions) Source() *Capture {
	if !o.Given() {
		return nil
	}
	return NewCapture(o.File)
}

// Capture is an ibnetdiscover capture on disk as a polled source (e.g. a ConfigMap mounted into the pod and
// refreshed by a job on an InfiniBand host). It is parsed again only when the file changes, and a file that
// cannot be read or parsed keeps the last good evidence in use.
type Capture struct {
	mu   sync.Mutex
	file ib.CaptureFile
	// fabric is the parse input was made from: an unchanged file gives the same pointer back.
	fabric *ib.Fabric
	input  topology.Input
}

// NewCapture returns the capture source of the file at path.
func NewCapture(path string) *Capture {
	return &Capture{file: ib.CaptureFile{Path: path}}
}

// Name returns Name.
func (c *Capture) Name() string { return Name }

// Merge is the source's merge rule, Merge.
func (c *Capture) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return Merge(merged, in)
}

// Merge is how a capture's evidence joins that of higher-priority sources: it places the nodes they do not
// know and adds its switch links; a node it places behind other switches is a conflict the earlier source wins.
func Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return topology.Merge(merged, in)
}

// Evidence returns the capture's evidence; err says why the file could not be (re)read, in which case the
// last good evidence (if any) is returned with it. ctx's deadline stops a long parse.
func (c *Capture) Evidence(ctx context.Context) (topology.Input, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fab, _, err := c.file.FabricContext(ctx)
	if err != nil {
		return c.input, fmt.Errorf("fabric capture: %w", err)
	}
	if fab == c.fabric {
		return c.input, nil
	}
	if len(fab.Switches) == 0 {
		return c.input, fmt.Errorf("fabric capture %s: no InfiniBand switch in it; keeping the last good one", c.file.Path)
	}
	in, err := EvidenceContext(ctx, fab, Options{})
	if err != nil {
		return c.input, fmt.Errorf("fabric capture %s: %w", c.file.Path, err)
	}
	c.fabric, c.input = fab, in
	return c.input, nil
}
