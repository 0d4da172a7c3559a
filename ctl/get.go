package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/view"
)

func newGet() *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "Show what fabricmap generated"}
	get.AddCommand(newGetHyperNodes(), newGetNodes(), newGetHealth(), newGetTiers())
	return get
}

// getOptions are the flags every get command shares.
type getOptions struct {
	output *outputFlag
	all    bool
	watch  bool
	// hyperNodesOptional is set by a command that shows something without the HyperNode CRD (from the nodes'
	// labels): --watch then watches the Nodes alone instead of failing with errNoHyperNodeCRD.
	hyperNodesOptional bool
}

// addFlags registers the shared flags on cmd; formats are its output formats, the default first.
func (o *getOptions) addFlags(cmd *cobra.Command, formats ...string) {
	o.output = addOutputFlag(cmd, formats...)
	if slices.Contains(formats, "json") { // runGet makes them of the JSON
		f := cmd.Flags().Lookup("output")
		f.Usage += "; or, made of the JSON as kubectl does: name, jsonpath=TEMPLATE, go-template=TEMPLATE, custom-columns=HEADER:PATH,…"
	}
	cmd.Flags().BoolVarP(&o.all, "all", "A", false, "include HyperNodes that fabricmap did not make")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "print again whenever HyperNodes or Nodes change, until interrupted")
}

// renderFunc writes what a get command shows, read from r; warnings go to errw.
type renderFunc func(ctx context.Context, r client.Reader, w, errw io.Writer) error

// runGet renders once from the API server, or, with --watch, from a watching cache on every change.
func runGet(cmd *cobra.Command, o getOptions, render renderFunc) error {
	if tmpl, ok, err := parseTemplateOutput(o.output.value); ok && slices.Contains(o.output.formats, "json") {
		if err != nil {
			return err
		}
		// The command renders its JSON; name, jsonpath and custom-columns are made of that.
		value := o.output.value
		o.output.value = "json"
		defer func() { o.output.value = value }()
		render = tmpl.wrap(render)
	}
	if err := o.output.check(); err != nil {
		return err
	}
	cfg, err := restConfig(cmd)
	if err != nil {
		return err
	}
	if o.watch {
		return watch(cmd.Context(), cfg, o, render, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := render(cmd.Context(), c, &out, cmd.ErrOrStderr()); err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out.Bytes())
	return err
}

func newGetHyperNodes() *cobra.Command {
	var o getOptions
	var shape treeShape
	cmd := &cobra.Command{
		Use:     "hypernodes",
		Aliases: []string{"hypernode", "hn"},
		Short:   "Print the HyperNodes as a tree (tier, name, node count, members, source)",
		Long: "Print the HyperNodes fabricmap made as a tree: each domain with its tier, tier name, node count and\n" +
			"source, its child domains and its node members. Members selected by regular expression or label are\n" +
			"resolved against the cluster's Nodes. For a large tree, --depth N prints the top N levels and\n" +
			"--domains-only leaves out the node lines (the counts stay). Without the HyperNode CRD (no Volcano: Kueue or\n" +
			"Koordinator read the node labels) every format shows the tree the nodes' topology labels state (by the keys\n" +
			"the aggregator states on its Lease, else the label style they are written in), saying so on standard error:\n" +
			"-o json, yaml and the forms made of them print the HyperNodes fabricmap would write for it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := shape.check(o.output.value); err != nil {
				return err
			}
			keys, known := publishedLabelKeys(cmd) // what the labels are read by, without the CRD
			return runGet(cmd, o, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				items, err := listHyperNodes(ctx, r, o.all)
				if errors.Is(err, errNoHyperNodeCRD) {
					return printLabelHyperNodes(ctx, r, w, errw, o.output.value, shape, keys, known, err)
				}
				if err != nil {
					return err
				}
				return printResolvedHyperNodes(w, errw, items, memberNodeLabels(ctx, r, items, errw), o.output.value, shape)
			})
		},
	}
	o.hyperNodesOptional = true // the nodes' labels stand in for them
	o.addFlags(cmd, "tree", "wide", "json", "yaml", "dot", "svg")
	shape.addFlags(cmd)
	return cmd
}

// errNoHyperNodeCRD is what `get hypernodes` says when the cluster has no HyperNode CRD.
var errNoHyperNodeCRD = errors.New("HyperNode CRD not installed (Volcano): see `get nodes`")

// listHyperNodes lists fabricmap's HyperNodes, or every HyperNode when all is set; errNoHyperNodeCRD when the
// cluster does not know the kind.
func listHyperNodes(ctx context.Context, r client.Reader, all bool) ([]topologyv1alpha1.HyperNode, error) {
	var list topologyv1alpha1.HyperNodeList
	var opts []client.ListOption
	if !all {
		opts = append(opts, client.MatchingLabels(hypernodegen.OwnedSelector()))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, errNoHyperNodeCRD
		}
		return nil, fmt.Errorf("listing HyperNodes: %w", err)
	}
	return list.Items, nil
}

// printHyperNodes writes HyperNodes in the chosen format; warnings about the tree go to errw. Node members
// selected by regex or label are not shown (printResolvedHyperNodes resolves them).
func printHyperNodes(w, errw io.Writer, items []topologyv1alpha1.HyperNode, output string) error {
	return printResolvedHyperNodes(w, errw, items, nil, output, treeShape{})
}

// printResolvedHyperNodes writes HyperNodes in the chosen format, resolving node members selected by regex or
// label against nodes (node name → labels; nil: not shown), the text tree cut to shape; warnings about the
// tree go to errw.
func printResolvedHyperNodes(w, errw io.Writer, items []topologyv1alpha1.HyperNode, nodes map[string]map[string]string, output string, shape treeShape) error {
	switch output {
	case "json", "yaml":
		list := topologyv1alpha1.HyperNodeList{Items: items}
		list.APIVersion, list.Kind = "v1", "List"
		for i := range list.Items {
			list.Items[i].APIVersion = topologyv1alpha1.SchemeGroupVersion.String()
			list.Items[i].Kind = "HyperNode"
			list.Items[i].ManagedFields = nil
		}
		return writeObject(w, list, output)
	case "tree", "wide", "dot", "svg":
		if len(items) == 0 {
			_, err := fmt.Fprintln(errw, "No HyperNodes found.")
			return err
		}
		t := viewHyperNodes(errw, items, nodes)
		switch output {
		case "dot":
			return view.DOT(w, t)
		case "svg": // the web page's map, every node drawn: `fabricmap get hypernodes -o svg > fabric.svg`
			return view.SVG(w, t, view.SVGOptions{MaxCells: -1})
		case "wide":
			return hyperNodesWide(w, t)
		}
		return shape.text(w, t)
	default:
		return fmt.Errorf("--output %q: want tree, wide, json, yaml, dot or svg", output)
	}
}

// printLabelHyperNodes prints, for a cluster without the HyperNode CRD, the tree the nodes' topology labels
// state (readLabelView, keys as known), in the chosen format: -o json and yaml print the HyperNodes fabricmap
// would write for it. noCRD is returned when the labels state none.
func printLabelHyperNodes(ctx context.Context, r client.Reader, w, errw io.Writer, output string, shape treeShape, keys hypernodegen.LabelKeys, known bool, noCRD error) error {
	what := "the tree below is"
	if output == "json" || output == "yaml" {
		what = "the HyperNodes below are made as fabricmap would write them,"
	}
	v, err := readLabelView(ctx, r, errw, keys, known, what, noCRD)
	if err != nil {
		return err
	}
	switch output {
	case "json", "yaml":
		items, err := v.hyperNodes()
		if err != nil {
			return err
		}
		return printResolvedHyperNodes(w, errw, items, nil, output, shape)
	case "dot":
		return view.DOT(w, v.tree)
	case "svg":
		return view.SVG(w, v.tree, view.SVGOptions{MaxCells: -1})
	case "wide":
		return hyperNodesWide(w, v.tree)
	}
	return shape.text(w, v.tree)
}

// memberNodeLabels lists the Nodes' labels (name → labels) when items select nodes by regular expression or
// label, for viewHyperNodes to resolve them; nil when none does, or, with a warning on errw, when the Nodes
// cannot be listed.
func memberNodeLabels(ctx context.Context, r client.Reader, items []topologyv1alpha1.HyperNode, errw io.Writer) map[string]map[string]string {
	if !treeread.NeedsNodeLabels(items) {
		return nil
	}
	nodes, err := listNodeLabels(ctx, r)
	if err != nil {
		fmt.Fprintf(errw, "warning: cannot resolve regex and label members: %v\n", err)
	}
	return nodes
}

// viewHyperNodes reads items as a tree (treeread.ViewHyperNodes), resolving regex and label members against
// nodes (nil: not resolved), and writes what it could not read to errw as warnings.
func viewHyperNodes(errw io.Writer, items []topologyv1alpha1.HyperNode, nodes map[string]map[string]string) *topology.Tree {
	t, warnings := treeread.ViewHyperNodes(items, nodes)
	for _, warn := range warnings {
		fmt.Fprintln(errw, "warning:", topology.Printable(warn))
	}
	return t
}
