package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// nodeListPage is how many Nodes one list request asks the API server for (a variable for tests).
var nodeListPage int64 = 500

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

// given reports whether the network is to be read from node labels.
func (f *labelFlags) given() bool { return f.opts.Given() }

// read reads the Nodes (of the cluster, or of --nodes-file) and converts their labels to evidence; the
// nodes left out are reported on the command's standard error. No Node with every label is nothing usable.
func (f *labelFlags) read(cmd *cobra.Command) (sourceRead, error) {
	if err := f.opts.Resolve(); err != nil {
		return sourceRead{}, fmt.Errorf("--from-labels-preset: %w", err)
	}
	if err := labels.ValidateKeys(f.opts.Keys); err != nil {
		return sourceRead{}, fmt.Errorf("--from-labels: %w", err)
	}
	var nodes []labels.Node
	var err error
	if f.file != "" {
		nodes, err = readNodesFile(f.file, cmd.ErrOrStderr())
	} else {
		nodes, err = clusterNodes(cmd.Context(), clusterFlagsOf(cmd))
	}
	if err != nil {
		return sourceRead{}, err
	}
	evidence, problems := labels.Evidence(nodes, f.opts.Keys)
	reasons := make([]string, len(problems))
	for i, p := range problems {
		reasons[i] = p.String()
	}
	warnAll(cmd.ErrOrStderr(), "labels: left out", reasons)
	r := sourceRead{flag: "--from-labels", value: strings.Join(f.opts.Keys, ","), name: labels.Name, in: evidence, merge: labels.MergeBelow, // the label source's merge rule
		why: fmt.Sprintf("none of the %d Nodes has all the labels %s", len(nodes), strings.Join(f.opts.Keys, ", "))}
	if len(evidence.Nodes) == 0 { // pseudo-switches above no node are of no use, whatever the other sources place
		return sourceRead{}, nothingUsable(r.flag, r.value, r.why)
	}
	return r, nil
}

// clusterNodes lists the names and labels of the cluster's Nodes (their metadata only), page by page.
func clusterNodes(ctx context.Context, cluster cli.ClusterFlags) ([]labels.Node, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes metadata client for %s: %w", cfg.Host, err)
	}
	nodes := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	var out []labels.Node
	opts := metav1.ListOptions{Limit: nodeListPage}
	for {
		page, err := nodes.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the Nodes of %s: %w", cfg.Host, err)
		}
		for _, n := range page.Items {
			out = append(out, labels.Node{Name: n.Name, Labels: n.Labels})
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// readNodesFile reads the Nodes of a `kubectl get nodes -o yaml|json` dump (nodes.ReadFile); a file without any
// Node is nothing usable.
func readNodesFile(path string, errw io.Writer) ([]labels.Node, error) {
	out, err := nodes.ReadFile(path, errw)
	switch {
	case errors.Is(err, nodes.ErrNoNode):
		return nil, nothingUsable("--nodes-file", path, nodes.ErrNoNode.Error())
	case err != nil:
		return nil, fmt.Errorf("--nodes-file: %w", err)
	}
	return out, nil
}
