package sources

import (
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/aws"
	"github.com/fabricmap/fabricmap/sources/gcp"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/oci"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// Kind is one kind of fabric-wide source in the registry: its name, its settings with their flags, and how
// the settings become a polled source.
type Kind struct {
	// Name is the source's name in --source-priority, logs, metrics and Events.
	Name string
	// Settings are the source's settings and flags.
	Settings Settings
	// Spec builds the configured source; called only when Settings.Given().
	Spec func(Deps) (Spec, error)
}

// Settings are what every source's options offer: their flags, shared by the aggregator and the CLI, the
// aggregator's polling flags, and whether they configure the source.
type Settings interface {
	AddFlags(fs *pflag.FlagSet)
	AddPollFlags(fs *pflag.FlagSet)
	Given() bool
}

// Deps are what the sources share that no one source owns.
type Deps struct {
	// Log receives the sources' logs.
	Log *slog.Logger
	// Hosts are the rules that tell host names from adapters' default descriptions (the capture's flags,
	// applied by UFM too).
	Hosts *ib.HostRules
	// Reported names hosts by the GUIDs the reports give; nil: none.
	Reported *ReportedGUIDs
	// Nodes lists the cluster's Nodes, for the sources that read them (labels, clouds); nil: the source's own
	// default, if it has one.
	Nodes nodes.Lister
}

// Kinds is the registry: every source, in the order they win conflicts after the reports. Adding a source is
// its package, its settings in Options and one line here (and its chart values).
func (o *Options) Kinds() []Kind {
	return []Kind{
		{Name: ufm.Name, Settings: &o.UFM, Spec: o.ufmSpec},
		{Name: ibfabric.Name, Settings: &o.Capture, Spec: o.captureSpec},
		{Name: labels.Name, Settings: &o.Labels, Spec: o.labelsSpec},
		{Name: aws.Name, Settings: &o.AWS, Spec: func(d Deps) (Spec, error) { return cloudSpec(o.AWS.Source(d.Log, d.Nodes))(o.AWS.Interval) }},
		{Name: gcp.Name, Settings: &o.GCP, Spec: func(d Deps) (Spec, error) { return cloudSpec(o.GCP.Source(d.Log, d.Nodes))(o.GCP.Interval) }},
		{Name: oci.Name, Settings: &o.OCI, Spec: func(d Deps) (Spec, error) { return cloudSpec(o.OCI.Source(d.Log, d.Nodes))(o.OCI.Interval) }},
	}
}

// cloudSource is what every cloud source offers beyond Source: the bound on one poll.
type cloudSource interface {
	Source
	Timeout() time.Duration
}

// cloudSpec is the Spec of a cloud source built by its Options.Source, polled every interval: it joins Nodes
// by their spec.providerID.
func cloudSpec[S cloudSource](src S, err error) func(interval time.Duration) (Spec, error) {
	return func(interval time.Duration) (Spec, error) {
		if err != nil {
			return Spec{}, err
		}
		return Spec{Source: src, Interval: interval, PollTimeout: src.Timeout(), ProviderIDs: true}, nil
	}
}

// Names lists the registry's sources in priority order.
func Names() []string {
	var o Options
	out := []string{}
	for _, k := range o.Kinds() {
		out = append(out, k.Name)
	}
	return out
}

func (o *Options) ufmSpec(d Deps) (Spec, error) {
	u, err := o.UFM.Source(d.Log)
	if err != nil {
		return Spec{}, err
	}
	u.Options.Hosts = d.Hosts
	if d.Reported != nil {
		u.Options.ReportedNode = d.Reported.Node
	}
	return Spec{Source: u, Interval: o.UFM.Interval, PollTimeout: u.Timeout()}, nil
}

func (o *Options) captureSpec(d Deps) (Spec, error) {
	c := o.Capture.Source()
	if d.Reported != nil {
		c.Options.ReportedNode = d.Reported.Node
	}
	return Spec{Source: c, Interval: o.Capture.Recheck}, nil
}

func (o *Options) labelsSpec(d Deps) (Spec, error) {
	if err := o.Labels.Resolve(); err != nil {
		return Spec{}, err
	}
	l := o.Labels.Source(d.Log)
	l.Nodes = d.Nodes
	return Spec{Source: l, Interval: o.Labels.Interval}, nil
}

// NodeReader is a Source that reads the cluster's Nodes. A caller that can list them only once the source is
// built (the aggregator, from its manager's cache) hands them over with UseNodes; a lister already set stays.
type NodeReader interface {
	UseNodes(list nodes.Lister)
}
