// Package outputs is the output registry: every kind of thing fabricmap writes or prints from the tree, in one
// list (Options.Kinds) that the aggregator writes from, `fabricmap topology -o NAME` prints from and
// `fabricmap cleanup` removes by. Adding an output is its builder (a package of its own, such as slurm), its
// settings in Options and one line in Kinds.
package outputs

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/topology"
)

// Kind is one output of the registry.
type Kind struct {
	// Name names the output in metrics (the "output" label), logs and cleanup.
	Name string
	// Doc says in a sentence what the output is and who reads it.
	Doc string
	// Formats are the `fabricmap topology -o` values that print it.
	Formats []string
	// Given reports whether the aggregator's settings turn the output on (Build kinds only).
	Given bool
	// Build returns the objects the aggregator writes from the tree: each applied when its content differs
	// from the live object's (the aggregator's generic build-and-apply writer). Nil for the outputs the
	// aggregator writes with guarded writers of its own, registered by Name (the HyperNodes and the node
	// labels: their guards decide what a pass may write).
	Build func(t *topology.Tree, env Env) ([]Object, error)
	// Prune says that the output's objects are one per something that may go (a NodeFeature per node, a KAI
	// Topology per name): owned objects of the kind that the tree no longer gives are deleted, and every one of
	// them when the output is off (not Given), once per aggregator start.
	Prune bool
	// Print returns what `fabricmap topology -o format` prints; nil: Build's objects as YAML.
	Print func(t *topology.Tree, env Env, format string) ([]byte, error)
	// Owned selects the objects of the output that `fabricmap cleanup` removes; nil: none of a kind of its
	// own (the node labels go by their field manager).
	Owned *Owned
	// Chart is what the output needs of the Helm chart: its values, the aggregator's RBAC rules that write
	// it and the admission policies that narrow them (hack/tools/chartsurface renders them).
	Chart chartsurface.Surface
}

// Object is one object an output writes.
type Object struct {
	// Object is the object, with its GroupVersionKind, namespace (if namespaced), name and labels.
	runtime.Object
	// Field is the top-level field that holds its content ("spec", "data"), compared with the live object's.
	Field string
	// Immutable says the API server refuses any change of Field (Kueue's Topology levels): a change is made
	// by deleting the object and creating it again.
	Immutable bool
}

// Owned selects an output's objects: those of a kind that carry fabricmap's managed-by label.
type Owned struct {
	// GroupKind is the objects' kind.
	GroupKind schema.GroupKind
	// Resource is the kind's resource, as RBAC names it (the cleanup hook's rules, hack/tools/chartsurface).
	Resource string
	// Namespaced kinds are looked for in the release's namespace only.
	Namespaced bool
	// Selector picks fabricmap's objects of the kind.
	Selector map[string]string
}

// Env is what the outputs are built from besides the tree and their own settings.
type Env struct {
	// LabelKeys are the node-label keys (their style): the node labels, Kueue and KAI levels, CNT layers, NFD
	// labels.
	LabelKeys hypernodegen.LabelKeys
	// Evidence is the reports' evidence, whose NVLink domains the node labels state.
	Evidence []topology.NodeEvidence
	// Namespace is the aggregator's namespace, where namespaced outputs without one of their own go (NFD).
	Namespace string
	// MemberSelector is how a HyperNode selects its nodes.
	MemberSelector string
	// Unwritable, when set, is told of every node an output leaves out because it cannot write for it (a
	// node name too long for the label NFD selects its node by), so that the caller says so: a node left out
	// is never silent. Nil: not told.
	Unwritable func(output, node, why string)
}

// unwritable tells e.Unwritable, when set, that output leaves node out, and why.
func (e Env) unwritable(output, node, why string) {
	if e.Unwritable != nil {
		e.Unwritable(output, node, why)
	}
}

// Options are the outputs' settings.
type Options struct {
	// ClusterNetworkTopology writes Koordinator's ClusterNetworkTopology "default", whose layers name the
	// node label keys (so it needs the node labels on).
	ClusterNetworkTopology bool
	// KueueTopology, when set, is the name of the Kueue Topology to write (levels = the node-label keys).
	KueueTopology string
	// KAITopology, when set, is the name of the NVIDIA KAI Scheduler Topology to write (levels = Kueue's).
	KAITopology string
	// TreeConfigMap, when set as "namespace/name", is a ConfigMap that holds the whole tree as JSON.
	TreeConfigMap string
	// Slurm are the Slurm outputs' settings.
	Slurm SlurmOptions
	// NodeFeatures writes one NFD NodeFeature per node carrying its topology labels.
	NodeFeatures bool
}

// AddFlags registers the outputs' settings on fs: the aggregator's flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ClusterNetworkTopology, "cluster-network-topology", false, "write Koordinator's ClusterNetworkTopology \"default\" (layers = the node-label keys)")
	fs.StringVar(&o.KueueTopology, "kueue-topology", "", "name of a Kueue Topology to write (levels = the node-label keys, kubernetes.io/hostname last; empty: none)")
	fs.StringVar(&o.KAITopology, "kai-topology", "", "name of an NVIDIA KAI Scheduler Topology (kai.scheduler/v1alpha1) to write (levels as --kueue-topology's; empty: none, and one written before is deleted)")
	fs.StringVar(&o.TreeConfigMap, "tree-configmap", "", "namespace/name of a ConfigMap to hold the whole tree as JSON (empty: none)")
	o.Slurm.AddFlags(fs)
	o.Slurm.AddConfigMapFlags(fs)
	fs.BoolVar(&o.NodeFeatures, "node-features", false, "write one NodeFeatureDiscovery NodeFeature (nfd.k8s-sigs.io/v1alpha1) per node in the aggregator's namespace, carrying the node's topology labels, for clusters where NFD is the only writer of node labels (NFD's master must allow the label keys' prefix)")
}

// Validate checks the outputs' settings.
func (o Options) Validate() error {
	if o.TreeConfigMap != "" {
		if _, _, err := SplitNamespacedName(o.TreeConfigMap); err != nil {
			return fmt.Errorf("--tree-configmap: %w", err)
		}
	}
	if o.KAITopology != "" {
		if msgs := validation.IsDNS1123Subdomain(o.KAITopology); len(msgs) > 0 {
			return fmt.Errorf("--kai-topology: %q is not a valid object name: %s", o.KAITopology, msgs[0])
		}
	}
	return o.Slurm.Validate()
}

// Kinds is the registry: every output, the HyperNodes first.
func (o *Options) Kinds() []Kind {
	return []Kind{
		hyperNodes(),
		nodeLabels(),
		o.kueueTopology(),
		o.kaiTopology(),
		o.clusterNetworkTopology(),
		o.treeConfigMap(),
		o.slurmConfigMap(),
		o.nodeFeatures(),
	}
}

// ByFormat returns the kind that prints `-o format`.
func (o *Options) ByFormat(format string) (Kind, bool) {
	for _, k := range o.Kinds() {
		for _, f := range k.Formats {
			if f == format {
				return k, true
			}
		}
	}
	return Kind{}, false
}

// Formats lists every `-o` value of the registry, in its order.
func Formats() []string {
	var o Options
	var out []string
	for _, k := range o.Kinds() {
		out = append(out, k.Formats...)
	}
	return out
}
