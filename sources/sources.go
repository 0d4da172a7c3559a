// Package sources holds the fabric-wide sources of topology evidence beside the agents' reports, one package
// each: ibfabric (an ibnetdiscover capture), ufm (NVIDIA UFM's REST API), labels (admin-kept node labels, or a
// managed service's preset), and the clouds' topology APIs aws (EC2), gcp (Compute Engine) and oci.
// Each exports its name, its settings with the flags that set them (the same in the aggregator and the CLI),
// its poll (Evidence) and its merge rule. Options is the one list of them both binaries wire: the first three
// are its own; the clouds, whose SDKs are most of what a cold build compiles, come from sources/clouds, which
// only the released binaries link (Extra).
package sources

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// Source is a source of evidence beside the node reports: ufm.Source, ibfabric.Capture, labels.Source and the
// clouds' (sources/clouds).
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

// Noter is a Source that does not take every host by its name: it re-identifies the hosts whose HCAs carry an
// adapter's default description, a generic name or a management host's name (by GUID, or after the node that
// reports the GUID), and leaves out those it cannot map. Notes lists them with the reason, for the last good
// evidence, so that the aggregator can say so in Events rather than only in its log.
type Noter interface {
	Notes() []ib.HostNote
}

// Spec is a source and how it is polled.
type Spec struct {
	// Source is the source.
	Source Source
	// Interval is the least time between two polls (the poller's default when zero).
	Interval time.Duration
	// PollTimeout bounds one poll (the poller's default when zero).
	PollTimeout time.Duration
	// Shrink holds a poll that loses too many of the source's nodes at once (the zero value: none).
	Shrink ShrinkGuard
	// ProviderIDs says that the source joins Nodes by their spec.providerID (the cloud sources): the Nodes it
	// is given (NodeReader) must carry it.
	ProviderIDs bool
}

// ShrinkGuard keeps a source's last good evidence when a poll gives far fewer nodes than the one before (a
// capture cut short, a fabric manager that lost part of its view): the smaller set is taken in only once the
// same nodes have stayed missing for ConfirmAfter. The aggregator applies it to every polled source.
type ShrinkGuard struct {
	// MaxShare is the share of the source's nodes one poll may lose; a poll that loses more is held. Zero
	// (or one) holds nothing.
	MaxShare float64
	// ConfirmAfter is how long the same nodes must stay missing before the smaller set is taken in; zero
	// takes it in at once.
	ConfirmAfter time.Duration
}

// AddFlags registers --source-shrink-max-share and --source-shrink-confirm-after.
func (g *ShrinkGuard) AddFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&g.MaxShare, "source-shrink-max-share", 0.2, "share of a source's nodes one poll may lose at once; a poll that loses more keeps the source's last good evidence until the same nodes stay missing for --source-shrink-confirm-after (1: no guard)")
	fs.DurationVar(&g.ConfirmAfter, "source-shrink-confirm-after", 30*time.Minute, "how long the nodes a source lost at once (more than --source-shrink-max-share) must stay missing before the smaller set is used (0: at once)")
}

// Validate refuses a share outside 0 to 1 and a negative confirmation period.
func (g ShrinkGuard) Validate() error {
	if !(g.MaxShare >= 0 && g.MaxShare <= 1) {
		return fmt.Errorf("--source-shrink-max-share %v: want a share from 0 to 1", g.MaxShare)
	}
	if g.ConfirmAfter < 0 {
		return fmt.Errorf("--source-shrink-confirm-after %v: want 0 or more", g.ConfirmAfter)
	}
	return nil
}

// Off tells whether the guard holds nothing.
func (g ShrinkGuard) Off() bool { return g.MaxShare <= 0 || g.MaxShare >= 1 || g.ConfirmAfter <= 0 }

// Options are the settings of every source a binary links. Kinds lists them in priority order: the one list of
// sources that the aggregator, `fabricmap topology` and the docs read. The zero value holds this package's
// sources alone; NewOptions adds an Extra's.
type Options struct {
	// UFM is NVIDIA UFM's settings.
	UFM ufm.SourceOptions
	// Capture is the ibnetdiscover capture's settings.
	Capture ibfabric.CaptureOptions
	// Labels is the label source's settings.
	Labels labels.SourceOptions
	// More are the sources of an Extra (sources/clouds: the cloud providers' topology APIs), each bound to its
	// own settings, ranked below this package's own in their order.
	More []Kind
	// Shrink is the aggregator's guard against a source losing many nodes at once, the same for every source.
	Shrink ShrinkGuard
	// Reported, when set, names hosts by the GUIDs the reports give (see ReportedGUIDs): the capture and UFM
	// sources consult it at every poll.
	Reported *ReportedGUIDs
}

// AddFlags registers every source's settings on fs: the flags the aggregator and the CLI share.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	for _, k := range o.Kinds() {
		k.Settings.AddFlags(fs)
	}
}

// AddPollFlags registers how often (and how long) the aggregator polls each source, and the shrink guard.
func (o *Options) AddPollFlags(fs *pflag.FlagSet) {
	for _, k := range o.Kinds() {
		k.Settings.AddPollFlags(fs)
	}
	o.Shrink.AddFlags(fs)
}

// Specs returns the configured sources with their polling, in priority order, each under the shrink guard
// (refused when invalid). d gives what the sources share (the log, the cluster's Nodes); o.Reported and the
// capture's host rules are added to it.
func (o *Options) Specs(d Deps) ([]Spec, error) {
	if err := o.Shrink.Validate(); err != nil {
		return nil, err
	}
	hosts, err := o.Capture.HostRules() // the host rules' flags are registered with the capture's; UFM applies them too
	if err != nil {
		return nil, err
	}
	d.Hosts = hosts
	if d.ReportedNode == nil && o.Reported != nil {
		d.ReportedNode = o.Reported.Node
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	var specs []Spec
	for _, k := range o.Kinds() {
		if !k.Settings.Given() {
			continue
		}
		spec, err := k.Spec(d)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", k.Name, err)
		}
		spec.Shrink = o.Shrink
		specs = append(specs, spec)
	}
	return specs, nil
}
