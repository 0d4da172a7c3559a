package ctl

import (
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// labelFlags are what `fabricmap topology` adds to the label source's shared settings (labels.SourceOptions,
// registered by sources.Options.AddFlags): --from-labels for --label-source-keys, and reading the Nodes from a
// dump instead of the cluster.
type labelFlags struct {
	opts *labels.SourceOptions
	file string
}

func (f *labelFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.opts.Keys, "from-labels", nil, "node label keys that describe the network, top to bottom, e.g. "+
		"topology.kubernetes.io/zone,example.com/spine,example.com/leaf; the Nodes are read from the cluster (--kubeconfig); the same as --label-source-keys")
	fs.StringVar(&f.opts.Preset, "from-labels-preset", "", "read the tree from the node labels a managed Kubernetes service writes: eks or gke; the same as --label-source-preset")
	fs.StringVar(&f.file, "nodes-file", "", "read the Nodes for --from-labels and the cloud sources from FILE, a `kubectl get nodes -o yaml` (or -o json) dump, instead of the cluster")
	fs.StringVar(&f.file, "from-labels-file", "", "the same as --nodes-file")
	_ = fs.MarkDeprecated("from-labels-file", "use --nodes-file")
}
