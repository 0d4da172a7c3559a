// Package sources holds the fabric-wide sources of topology evidence beside the agents' reports, one package
// each: ibfabric (an ibnetdiscover capture), ufm (NVIDIA UFM's REST API) and labels (admin-kept node labels).
// Each exports its name, its settings with the flags that set them (the same in the aggregator and the CLI),
// its poll (Evidence) and its merge rule. Options is the one list of them both binaries wire.
package sources

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// Source is a source of evidence beside the node reports. ufm.Source, ibfabric.Capture and labels.Source are
// the sources there are.
type Source interface {
	// Name names the source in logs, metrics, Events and the priority list.
	Name() string
	// Evidence returns what the source knows now; ctx carries the poll's deadline. It is never called again
	// before it returned.
	Evidence(ctx context.Context) (topology.Input, error)
	// Merge is the source's merge rule: it adds the source's evidence, in, to what the sources that rank
	// above it gave, merged, whose nodes win, and returns the nodes the two disagree about.
	Merge(merged, in topology.Input) (topology.Input, []topology.Conflict)
}

// Spec is a source and how it is polled.
type Spec struct {
	// Source is the source.
	Source Source
	// Interval is the least time between two polls (the poller's default when zero).
	Interval time.Duration
	// PollTimeout bounds one poll (the poller's default when zero).
	PollTimeout time.Duration
}

// Options are the settings of every source, in the order the aggregator lists them.
type Options struct {
	// UFM is NVIDIA UFM's settings.
	UFM ufm.SourceOptions
	// Capture is the ibnetdiscover capture's settings.
	Capture ibfabric.CaptureOptions
	// Labels is the label source's settings.
	Labels labels.SourceOptions
}

// AddFlags registers every source's settings on fs: the flags the aggregator and the CLI share.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.UFM.AddFlags(fs)
	o.Capture.AddFlags(fs)
	o.Labels.AddFlags(fs)
}

// AddPollFlags registers how often (and how long) the aggregator polls each source.
func (o *Options) AddPollFlags(fs *pflag.FlagSet) {
	o.UFM.AddPollFlags(fs)
	o.Capture.AddPollFlags(fs)
	o.Labels.AddPollFlags(fs)
}

// Specs returns the configured sources with their polling: UFM, the capture, the labels, each when its
// settings name it. The label source's Nodes are left for the caller to set.
func (o *Options) Specs(log *slog.Logger) ([]Spec, error) {
	var specs []Spec
	u, err := o.UFM.Source(log)
	if err != nil {
		return nil, err
	}
	if u != nil {
		specs = append(specs, Spec{Source: u, Interval: o.UFM.Interval, PollTimeout: u.Timeout()})
	}
	if c := o.Capture.Source(); c != nil {
		specs = append(specs, Spec{Source: c, Interval: o.Capture.Recheck})
	}
	if l := o.Labels.Source(log); l != nil {
		specs = append(specs, Spec{Source: l, Interval: o.Labels.Interval})
	}
	return specs, nil
}
