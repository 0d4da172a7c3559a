package labels

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// SourceOptions are the settings of the label source: the same flags in the aggregator and the CLI.
type SourceOptions struct {
	// Keys are the label keys an admin maintains, top of the network first; empty: no label source.
	Keys []string
	// Preset names keys a managed Kubernetes service writes (Presets: eks, gke), instead of Keys.
	Preset string
	// Interval is how often the aggregator reads the nodes' labels.
	Interval time.Duration
}

// AddFlags registers --label-source-keys on fs.
func (o *SourceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Keys, "label-source-keys", nil, "node-label keys an admin maintains, top of the network first (e.g. topology.kubernetes.io/zone,example.com/spine,example.com/leaf): a source of evidence (empty: none)")
	fs.StringVar(&o.Preset, "label-source-preset", "", "the node-label keys a managed Kubernetes service writes itself, instead of --label-source-keys: "+
		"eks (topology.k8s.aws/network-node-layer-1..3) or gke (cloud.google.com/gce-topology-block, -subblock)")
}

// AddPollFlags registers how often the aggregator reads the labels: --label-source-interval.
func (o *SourceOptions) AddPollFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "label-source-interval", time.Minute, "how often the label source reads the nodes' labels")
}

// Given reports whether a label source is configured (--label-source-keys or --label-source-preset).
func (o *SourceOptions) Given() bool { return len(o.Keys) > 0 || o.Preset != "" }

// Source returns the label source, or nil when --label-source-keys is not set. Its Nodes are left for the
// caller to set.
func (o *SourceOptions) Source(log *slog.Logger) *Source {
	if !o.Given() || o.Resolve() != nil { // callers Resolve first, to report the error
		return nil
	}
	return &Source{Keys: o.Keys, Log: log}
}

// Source is the nodes' own labels as a polled source: Keys, from the top of the network to the leaves, are
// label keys an admin already maintains (Volcano's label discoverer works the same way). Its pseudo-switches
// never share identifiers with real switches, so it is merged below the other sources (MergeBelow).
type Source struct {
	// Nodes lists the nodes and their labels.
	Nodes nodes.Lister
	// Keys are the label keys, top first.
	Keys []string
	// Log receives the nodes left out and why.
	Log *slog.Logger
}

// Name returns Name.
func (s *Source) Name() string { return Name }

// UseNodes sets Nodes unless it is set (sources.NodeReader).
func (s *Source) UseNodes(list nodes.Lister) {
	if s.Nodes == nil {
		s.Nodes = list
	}
}

// NodeLabelKeys returns the label keys Evidence reads of each Node: Keys, and the NVLink domain and rack labels
// (CliqueLabel, SubDomainLabel). The aggregator's Node cache keeps these and drops the rest.
func (s *Source) NodeLabelKeys() []string {
	return append(slices.Clone(s.Keys), CliqueLabel, SubDomainLabel)
}

// Merge is the source's merge rule, MergeBelow: it places only the nodes no higher-priority source places.
func (s *Source) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return MergeBelow(merged, in)
}

// Evidence lists the nodes and converts their labels. No node with a full label path is an error, so that
// labels removed by mistake keep the last good evidence rather than empty the tree.
func (s *Source) Evidence(ctx context.Context) (topology.Input, error) {
	nodes, err := s.Nodes(ctx)
	if err != nil {
		return topology.Input{}, fmt.Errorf("listing nodes: %w", err)
	}
	in, problems := Evidence(nodes, s.Keys)
	if len(problems) > 0 && s.Log != nil {
		first := make([]string, 0, min(len(problems), 20))
		for _, p := range problems[:min(len(problems), 20)] {
			first = append(first, p.String())
		}
		s.Log.Warn("Nodes the label source left out", "source", Name, "count", len(problems), "first", first)
	}
	if len(in.Nodes) == 0 {
		return topology.Input{}, fmt.Errorf("%w: none of the %d Nodes has all the labels %s", topology.ErrNothingUsable, len(nodes), strings.Join(s.Keys, ", "))
	}
	return in, nil
}
