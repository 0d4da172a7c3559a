package ibfabric

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
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
	// Hosts are the rules that tell host names from adapters' default descriptions, generic names and
	// management hosts: the flags are registered here once and are UFM's too (ufm.Options.Hosts).
	Hosts ib.HostRuleOptions
}

// AddFlags registers --capture-file on fs, and the host rules the capture and UFM share (see
// ib.HostRuleOptions).
func (o *CaptureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "capture-file", "", "ibnetdiscover capture of the whole fabric (e.g. a mounted ConfigMap): gives the tiers above the leaves (empty: none)")
	o.Hosts.AddFlags(fs)
}

// HostRules checks the host rule flags and returns the rules, for the capture and UFM alike.
func (o *CaptureOptions) HostRules() (*ib.HostRules, error) {
	r, err := o.Hosts.Rules()
	if err != nil {
		return nil, fmt.Errorf("host rules: %w", err)
	}
	return &r, nil
}

// AddPollFlags registers how often the aggregator looks at the capture: --capture-recheck.
func (o *CaptureOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Recheck, "capture-recheck", time.Minute, "how often the capture file is checked for changes")
}

// Given reports whether a capture is configured (--capture-file).
func (o *CaptureOptions) Given() bool { return o.File != "" }

// Source returns the capture source, or nil when --capture-file is not set. Host rule flags that do not
// check (see HostRules) fail every poll with their error.
func (o *CaptureOptions) Source() *Capture {
	if !o.Given() {
		return nil
	}
	c := NewCapture(o.File)
	c.Options.Hosts, c.rulesErr = o.HostRules()
	return c
}

// Capture is an ibnetdiscover capture on disk as a polled source (e.g. a ConfigMap mounted into the pod and
// refreshed by a job on an InfiniBand host). It is parsed again only when the file changes, and a file that
// cannot be read or parsed keeps the last good evidence in use.
type Capture struct {
	// Options convert the fabric; set them before the first poll. With Options.ReportedNode set, the evidence
	// is made again at every poll (the reports change), the parse only when the file does.
	Options Options
	// Log receives the hosts Options.Hosts re-identified or left out, each time they change; nil: slog.Default().
	Log *slog.Logger

	rulesErr error // why the host rules did not check

	// good is the last good evidence with the fabric and host notes it came from; read without mu (a poll
	// holds mu through a long parse, and the reconcile must not wait for it). nil before the first.
	good atomic.Pointer[goodCapture]

	mu   sync.Mutex // one poll at a time
	file ib.CaptureFile
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
	if c.rulesErr != nil {
		return topology.Input{}, fmt.Errorf("fabric capture %s: %w", c.file.Path, c.rulesErr)
	}
	last := c.good.Load()
	if last == nil {
		last = &goodCapture{}
	}
	fab, _, err := c.file.FabricContext(ctx)
	if err != nil {
		return last.input, fmt.Errorf("fabric capture: %w", err)
	}
	if fab == last.fabric && c.Options.ReportedNode == nil {
		return last.input, nil // an unchanged file gives the same parse back
	}
	if len(fab.Switches) == 0 {
		return last.input, fmt.Errorf("fabric capture %s: no InfiniBand switch in it; keeping the last good one", c.file.Path)
	}
	in, notes, err := Evidence(ctx, fab, c.Options)
	if err != nil {
		return last.input, fmt.Errorf("fabric capture %s: %w", c.file.Path, err)
	}
	if !slices.Equal(notes, last.notes) {
		c.logNotes(notes)
	}
	c.good.Store(&goodCapture{fabric: fab, input: in, notes: notes})
	return in, nil
}

// goodCapture is the last good evidence and what it came from: the parse and the host notes.
type goodCapture struct {
	fabric *ib.Fabric
	input  topology.Input
	notes  []ib.HostNote
}

// Fabric returns the parsed fabric of the last good evidence (its switch links with their widths and speeds,
// for fabric health); nil before the first. The caller must not change it.
func (c *Capture) Fabric() *ib.Fabric {
	if g := c.good.Load(); g != nil {
		return g.fabric
	}
	return nil
}

// Notes returns the notes of the hosts the last good evidence re-identified or left out (see Evidence).
func (c *Capture) Notes() []ib.HostNote {
	if g := c.good.Load(); g != nil {
		return slices.Clone(g.notes)
	}
	return nil
}

// maxLoggedNotes is how many host notes one log line quotes; the rest are counted.
const maxLoggedNotes = 20

// logNotes logs the hosts the host rules re-identified or left out, as a warning naming the capture.
func (c *Capture) logNotes(notes []ib.HostNote) {
	if len(notes) == 0 {
		return
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	first := make([]string, 0, min(len(notes), maxLoggedNotes))
	for _, n := range notes[:min(len(notes), maxLoggedNotes)] {
		first = append(first, topology.Printable(n.String()))
	}
	log.Warn("capture hosts whose CA descriptions name no host: re-identified by GUID or left out",
		"source", Name, "file", c.file.Path, "count", len(notes), "first", first)
}
