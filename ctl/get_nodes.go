package ctl

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/view"
)

// nodeListGVK is the kind of the Node list read as metadata only.
var nodeListGVK = schema.GroupVersionKind{Version: "v1", Kind: "NodeList"}

func newGetNodes() *cobra.Command {
	var o getOptions
	keys := hypernodegen.DefaultLabelKeys()
	cmd := &cobra.Command{
		Use:     "nodes",
		Aliases: []string{"node", "no"},
		Short:   "Print each node's path to the top of the tree and the fabricmap labels on it",
		Long: "Print every node with the domains that hold it, closest first, up to the top (with their tiers), and the\n" +
			"labels fabricmap writes on it (--label-keys, --accelerator-label-key, --accelerator-sub-domain-label-key: the\n" +
			"aggregator's keys). A tier label that differs from the tree is marked; nodes no domain holds are listed as having no topology.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := keys.Validate(); err != nil {
				return err
			}
			return runGet(cmd, o, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				return renderNodes(ctx, r, w, errw, o, keys)
			})
		},
	}
	o.addFlags(cmd)
	keys.AddFlags(cmd.Flags()) // the aggregator's flags: give the keys it was given
	return cmd
}

// renderNodes reads the HyperNodes and the Nodes and writes each node's place.
func renderNodes(ctx context.Context, r client.Reader, w, errw io.Writer, o getOptions, keys hypernodegen.LabelKeys) error {
	hns, err := listHyperNodes(ctx, r, o.all)
	if err != nil {
		return err
	}
	nodes, err := listNodeLabels(ctx, r)
	if err != nil {
		return err
	}
	t, warnings := treeread.ViewHyperNodes(hns, nodes)
	for _, warn := range warnings {
		fmt.Fprintln(errw, "warning:", topology.Printable(warn))
	}
	tierOnly := hypernodegen.LabelKeys{Tiers: keys.Tiers} // NVLink domains are not in HyperNodes: compare tiers only
	places := view.NodePlaces(t, nodes, keys.All(), hypernodegen.NodeLabels(t, nil, tierOnly))
	switch o.output {
	case "json", "yaml":
		return writeObject(w, struct {
			Nodes []view.NodePlace `json:"nodes"`
		}{places}, o.output)
	case "dot":
		for _, p := range places {
			if p.NoTopology {
				t.Unplaced = append(t.Unplaced, p.Node)
			}
		}
		return view.DOT(w, t)
	default:
		if len(places) == 0 {
			_, err := fmt.Fprintln(errw, "No nodes found.")
			return err
		}
		return view.NodesText(w, places)
	}
}
