package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view"
)

// nodeListGVK is the kind of the Node list read as metadata only.
var nodeListGVK = schema.GroupVersionKind{Version: "v1", Kind: "NodeList"}

func newGetNodes() *cobra.Command {
	var o nodesOptions
	keys := hypernodegen.DefaultLabelKeys()
	cmd := &cobra.Command{
		Use:     "nodes [NAME...]",
		Aliases: []string{"node", "no"},
		Short:   "Print each node's path to the top of the tree and the fabricmap labels on it",
		Long: "Print every node with the domains that hold it, closest first, up to the top (with their tiers), and the\n" +
			"labels fabricmap writes on it (the aggregator's keys: as --label-style and the key flags say, else as the\n" +
			"aggregator states them on its Lease, else the named style whose keys the most nodes carry). A tier label that differs from the tree is marked; nodes no domain holds are listed as having no topology.\n" +
			"NAME... prints only those nodes (a name that is neither a Node nor in a HyperNode is an error); -l prints\n" +
			"only the Nodes whose labels match the selector, as kubectl's -l. -o wide prints one line a node: its\n" +
			"domain at every tier, whether its tier labels agree with the tree, and what is missing. Without HyperNodes\n" +
			"(no Volcano) the tree is the one the nodes' topology labels state, as Kueue and Koordinator read it.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := keys.Resolve(cmd.Flags()); err != nil {
				return err
			}
			if err := keys.Validate(); err != nil {
				return err
			}
			sel, err := labels.Parse(o.selector)
			if err != nil {
				return fmt.Errorf("--selector %q: %w", o.selector, err)
			}
			o.names, o.matches, o.keysGiven = args, sel, keys.FlagsGiven(cmd.Flags())
			if published, ok := publishedLabelKeys(cmd); ok && !o.keysGiven {
				keys, o.keysGiven = published, true // the aggregator's own keys, from its Lease
			}
			return runGet(cmd, o.getOptions, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				return renderNodes(ctx, r, w, errw, o, keys)
			})
		},
	}
	o.hyperNodesOptional = true
	o.addFlags(cmd, "tree", "wide", "json", "yaml", "dot")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector on the Nodes, e.g. -l nvidia.com/gpu.present=true (=, ==, !=, in, notin, exists)")
	keys.AddFlags(cmd.Flags()) // the aggregator's flags: give the keys it was given
	return cmd
}

// nodesOptions are the flags and arguments of `get nodes`.
type nodesOptions struct {
	getOptions
	// selector is -l as given; matches is it parsed.
	selector string
	matches  labels.Selector
	// names are the nodes asked for; empty: every node.
	names []string
	// keysGiven says the label-key flags were given; otherwise the keys are read from the nodes' labels.
	keysGiven bool
}

// renderNodes reads the HyperNodes and the Nodes and writes each node's place.
func renderNodes(ctx context.Context, r client.Reader, w, errw io.Writer, o nodesOptions, keys hypernodegen.LabelKeys) error {
	hns, err := listHyperNodes(ctx, r, o.all)
	if errors.Is(err, errNoHyperNodeCRD) && o.hyperNodesOptional {
		hns, err = nil, nil
	}
	if err != nil {
		return err
	}
	nodes, err := listNodeLabels(ctx, r)
	if err != nil {
		return err
	}
	if detected, ok := hypernodegen.DetectStyle(nodes); ok && !o.keysGiven {
		keys = detected // the style the aggregator writes, as its labels show; --label-style overrides
	}
	t := viewHyperNodes(errw, hns, nodes)
	if len(hns) == 0 { // no Volcano: Kueue and Koordinator read the labels, and so does this view
		if fromLabels := treeFromNodeLabels(errw, nodes, keys, "the tree below is"); fromLabels != nil {
			t = fromLabels
		}
	}
	tierOnly := hypernodegen.LabelKeys{Tiers: keys.Tiers} // NVLink domains are not in HyperNodes: compare tiers only
	places, err := o.pick(view.NodePlaces(t, nodes, keys.All(), hypernodegen.NodeLabels(t, nil, tierOnly)), nodes)
	if err != nil {
		return err
	}
	switch o.output.value {
	case "json", "yaml":
		return writeObject(w, struct {
			Nodes []view.NodePlace `json:"nodes"`
		}{places}, o.output.value)
	case "dot":
		if len(o.names) > 0 || o.selects() {
			t = subtree(t, places)
		}
		for _, p := range places {
			if p.NoTopology {
				t.Unplaced = append(t.Unplaced, p.Node)
			}
		}
		return view.DOT(w, t)
	case "wide":
		if len(places) == 0 {
			_, err := fmt.Fprintln(errw, "No nodes found.")
			return err
		}
		return nodesWide(w, places)
	default:
		if len(places) == 0 {
			_, err := fmt.Fprintln(errw, "No nodes found.")
			return err
		}
		return view.NodesText(w, places)
	}
}

// selects reports whether -l narrows the nodes.
func (o nodesOptions) selects() bool { return o.matches != nil && !o.matches.Empty() }

// pick keeps the places of the nodes asked for: those named (in the order given, each once), and those whose
// Node's labels (nodes: name → labels) match the selector. A name that is neither a Node nor in the tree is
// an error naming it.
func (o nodesOptions) pick(places []view.NodePlace, nodes map[string]map[string]string) ([]view.NodePlace, error) {
	if o.selects() {
		places = slices.DeleteFunc(places, func(p view.NodePlace) bool {
			l, ok := nodes[p.Node]
			return !ok || !o.matches.Matches(labels.Set(l))
		})
	}
	if len(o.names) == 0 {
		return places, nil
	}
	byName := make(map[string]view.NodePlace, len(places))
	for _, p := range places {
		byName[p.Node] = p
	}
	var picked []view.NodePlace
	var missing []string
	seen := map[string]bool{}
	for _, n := range o.names {
		if seen[n] {
			continue
		}
		seen[n] = true
		p, ok := byName[n]
		if !ok {
			missing = append(missing, strconv.Quote(n))
			continue
		}
		picked = append(picked, p)
	}
	if len(missing) > 0 {
		what := "no Node and in no HyperNode"
		if o.selects() {
			what += ", or its labels do not match -l " + o.selector
		}
		return nil, fmt.Errorf("node %s not found (%s)", strings.Join(missing, ", "), what)
	}
	return picked, nil
}

// subtree is t with only the domains on the paths of places: the part of the tree the picked nodes are in.
func subtree(t *topology.Tree, places []view.NodePlace) *topology.Tree {
	keep := map[string]bool{}
	picked := map[string]bool{}
	for _, p := range places {
		picked[p.Node] = true
		for _, s := range p.Path {
			keep[s.Name] = true
		}
	}
	out := topology.NewTree()
	for name, d := range t.Domains {
		if !keep[name] {
			continue
		}
		c := *d
		c.Children = slices.DeleteFunc(slices.Clone(d.Children), func(n string) bool { return !keep[n] })
		c.Nodes = slices.DeleteFunc(slices.Clone(d.Nodes), func(n string) bool { return !picked[n] })
		out.Domains[name] = &c
	}
	return out
}
