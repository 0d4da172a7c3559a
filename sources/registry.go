package sources

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// Kind is one kind of fabric-wide source in the registry: its name, its settings with their flags, and how
// the settings become a polled source.
type Kind struct {
	// Name is the source's name in --source-priority, logs, metrics and Events.
	Name string
	// Doc says in a sentence what the source reads and gives (the docs' table of sources).
	Doc string
	// Below says that the source merges below the others (labels.MergeBelow): it places only nodes that no
	// source ranking above it places; otherwise its switch links join theirs (topology.Merge).
	Below bool
	// Settings are the source's settings and flags.
	Settings Settings
	// Spec builds the configured source; called only when Settings.Given().
	Spec func(Deps) (Spec, error)
	// Usage is how `fabricmap topology`'s usage line and its error without a source give the flag that turns
	// the source on, with its argument ("--from-gcp PROJECT"). The sources of an Extra set it; this package's
	// own have CLI aliases that ctl states itself.
	Usage string
	// Chart is what the source needs of the Helm chart (its package's Chart): its values and the aggregator's
	// RBAC rules to read what it reads (hack/tools/chartsurface renders them).
	Chart chartsurface.Surface
}

// Extra makes the sources a binary links beyond this package's own three (ufm, ibnetdiscover, labels), in the
// order they rank below them, each call with settings of its own: sources/clouds.Kinds gives the clouds'
// topology APIs. A main hands it to the aggregator and the CLI (aggregatorapp.Main, ctl.NewRoot), so that a
// binary built without them, the demo's, compiles none of their SDKs. Nil gives none.
type Extra func() []Kind

// NewOptions returns the settings of this package's sources and of extra's (nil: this package's alone).
func NewOptions(extra Extra) Options {
	var o Options
	if extra != nil {
		o.More = extra()
	}
	return o
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
	// ReportedNode names a host by the GUIDs the reports give ("" when none does); nil: none.
	ReportedNode func(ib.GUID) string
	// Nodes lists the cluster's Nodes, for the sources that read them (labels, clouds); nil: the source's own
	// default, if it has one.
	Nodes nodes.Lister
}

// Kinds is the registry: every source, in the order they win conflicts after the reports: this package's own,
// then o.More. Adding a source is its package, its settings in Options (or in an Extra's package, as the
// clouds' are) and one line here or there (and its chart values).
func (o *Options) Kinds() []Kind {
	return append([]Kind{
		{Name: ufm.Name, Settings: &o.UFM, Spec: o.ufmSpec, Chart: ufm.Chart,
			Doc: "NVIDIA UFM's REST API: the whole InfiniBand fabric, hosts, switches and cables"},
		{Name: ibfabric.Name, Settings: &o.Capture, Spec: o.captureSpec, Chart: ibfabric.Chart,
			Doc: "an ibnetdiscover capture of the whole fabric in a file or a folder of chunks (a mounted ConfigMap)"},
		{Name: labels.Name, Settings: &o.Labels, Spec: o.labelsSpec, Below: true, Chart: labels.Chart,
			Doc: "node labels an admin or a managed Kubernetes service keeps, top of the network first"},
	}, o.More...)
}

// Names lists the registry's sources in priority order: this package's own, then extra's.
func Names(extra Extra) []string {
	o := NewOptions(extra)
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
	u.Options.Hosts, u.Options.ReportedNode = d.Hosts, d.ReportedNode
	return Spec{Source: u, Interval: o.UFM.Interval, PollTimeout: u.Timeout()}, nil
}

func (o *Options) captureSpec(d Deps) (Spec, error) {
	c := o.Capture.Source()
	c.Options.ReportedNode, c.Log = d.ReportedNode, d.Log
	return Spec{Source: c, Interval: o.Capture.Recheck}, nil
}

func (o *Options) labelsSpec(d Deps) (Spec, error) {
	if err := o.Labels.Resolve(); err != nil {
		return Spec{}, err
	}
	if err := labels.ValidateKeys(o.Labels.Keys); err != nil {
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

// Explainer is a Source that can say what its last evidence lacks when it proves to place no node (a capture
// or UFM with switches but no host cabled to them): `fabricmap topology` prints it.
type Explainer interface {
	Unplaced() string
}
