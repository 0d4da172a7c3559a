package ctl

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// ownSourceFlags are the ways to give `fabricmap topology` its evidence from a dump of reports and package
// sources' own sources; topologySourceFlags adds an Extra's.
const ownSourceFlags = "--from-ibnetdiscover FILE | --from-reports DIR | --from-ufm URL | --from-ufm-dump DIR | --from-labels KEYS"

// topologySourceFlags are the ways to give `fabricmap topology` its evidence, as its usage line and its error
// without one say them: every source of the registry, and a dump of reports.
func topologySourceFlags(srcs *sources.Options) string {
	flags := []string{ownSourceFlags}
	for _, k := range srcs.More {
		flags = append(flags, k.Usage)
	}
	return strings.Join(flags, " | ")
}

// maxWarnings is how many parse warnings are printed one by one before they are only counted.
const maxWarnings = 20

func newTopology(extra sources.Extra) *cobra.Command {
	var reportsDir, rootName, memberSelector, previous, kueueName string
	var output *outputFlag
	keys := hypernodegen.DefaultLabelKeys() // the aggregator's --label-style and key flags (Resolve after parsing)
	var accelerators bool
	var priority []string
	srcs := sources.NewOptions(extra) // the sources' flags, shared with fabricmap-aggregator
	var outOpts outputs.Options
	fromUFM := ufmFlags{opts: &srcs.UFM}
	fromLabels := labelFlags{opts: &srcs.Labels}
	cmd := &cobra.Command{
		Use:   "topology (" + topologySourceFlags(&srcs) + ")",
		Short: "Print the HyperNodes, node labels, Kueue or KAI Topology, ClusterNetworkTopology, Slurm topology files or NFD NodeFeatures a fabric capture or a dump of node reports implies, as the aggregator would write them",
		Long: "Infer the tree offline and print the Volcano HyperNodes as a Kubernetes List (-o yaml, json; -o tree, dot\n" +
			"draw them), or what the aggregator writes beside them from the same tree: -o labels the node labels (a JSON\n" +
			"object, node → its labels, in the --label-style chosen), -o kueue the Kueue Topology (named by --kueue-topology),\n" +
			"-o kai the KAI Scheduler Topology (named by --kai-topology), -o cnt Koordinator's ClusterNetworkTopology,\n" +
			"all three as YAML; -o slurm Slurm's topology.conf for the tree plugin,\n" +
			"-o slurm-block for the block plugin (--slurm-block-sizes), -o slurm-yaml Slurm's topology.yaml; -o nfd the\n" +
			"NFD NodeFeatures carrying the node labels. --from-ibnetdiscover reads\n" +
			"ibnetdiscover output (FILE, or - for standard input): rail-optimised leaves that share hosts form one\n" +
			"tier-1 domain, spines and cores above, one root. --from-reports reads NodeFabricReports (YAML or JSON\n" +
			"files in DIR, single objects or Lists such as `kubectl get nfr -o yaml` prints). Given both, the reports\n" +
			"place their nodes, the capture adds the switch links above the leaves and the hosts without a report.\n" +
			"--from-ufm reads the fabric from NVIDIA UFM's REST API, --from-ufm-dump from saved answers of it; like a\n" +
			"capture, it adds switch links and hosts, and reports (and a capture) win where they place a node elsewhere.\n" +
			"--from-labels reads the tree from node labels (keys top to bottom), of the cluster or --nodes-file;\n" +
			"it places the nodes that no other source knows.\n" +
			"The sources' settings are the aggregator's flags (--capture-file, --ufm-url, --ufm-*-file, --label-source-keys);\n" +
			"--from-ibnetdiscover, --from-ufm and --from-labels are the same as the first three.\n" +
			"The sources are merged and the tree is built by the aggregator's own code (pipeline.Infer): --source-priority\n" +
			"orders them as there (default " + strings.Join(pipeline.DefaultSourcePriority, ",") + "), each source joining by its own merge rule.\n" +
			"A source given that yields nothing usable ends the command with an error naming it; reports without\n" +
			"neighbours are usable when their RDMA devices' GUIDs name hosts of the capture or UFM, or when they give\n" +
			"the NVLink domain of a node another source places, as in the aggregator.\n" +
			"--previous FILE reads the HyperNodes written before (kubectl get hypernodes -o yaml) and keeps their names\n" +
			"as the aggregator does: a domain that keeps most of its switches keeps its name. A switch they stood for\n" +
			"that is gone from the fabric now is a warning naming it and the nodes of its HyperNode it leaves short.\n" +
			"Lines, reports and hosts that could not be used are reported on standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if reportsDir == "" && !sourcesGiven(&srcs) {
				return fmt.Errorf("give one of %s", topologySourceFlags(&srcs))
			}
			if err := output.check(); err != nil {
				return err
			}
			if err := pipeline.ValidateSourcePriority(priority); err != nil {
				return fmt.Errorf("--source-priority: %w", err)
			}
			if err := keys.Resolve(cmd.Flags()); err != nil {
				return err
			}
			if err := keys.Validate(); err != nil {
				return err
			}
			if err := (hypernodegen.Options{NodeSelector: memberSelector, LabelKeys: keys}).Validate(); err != nil {
				return fmt.Errorf("--member-selector: %w", err)
			}
			var prev *topology.Tree
			if previous != "" {
				var err error
				if prev, err = readPrevious(previous, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			// The context ends on SIGINT or SIGTERM (cmd/fabricmap): every long step looks at it.
			ctx, errw := cmd.Context(), cmd.ErrOrStderr()
			var read []sourceRead
			// The reports name the hosts of a capture or UFM whose adapters carry no usable description.
			var reportedNode func(ib.GUID) string
			// The reports' evidence: the NVLink domains the labels state, as in the aggregator.
			var reportEvidence []topology.NodeEvidence
			if reportsDir != "" {
				reports, err := readReports(reportsDir, errw)
				if err != nil {
					return err
				}
				if len(reports) == 0 {
					return nothingUsable("--from-reports", reportsDir, "no NodeFabricReport in its .yaml, .yml or .json files")
				}
				var in topology.Input
				for i := range reports {
					in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(reports[i]))
				}
				reportEvidence = in.Nodes
				// The reports' cloud sections: the nodes' own instance metadata, as the aggregator reads them.
				if cloud, problems := pipeline.CloudEvidence(reports); len(cloud.Nodes) > 0 {
					for _, p := range problems {
						fmt.Fprintln(errw, "warning:", p)
					}
					read = append(read, sourceRead{flag: "--from-reports", value: reportsDir, merge: labels.MergeBelow, name: pipeline.SourceCloud, in: cloud,
						why: "none of its reports' cloud sections places a node"})
				}
				named := &namedNodes{byGUID: pipeline.ReportGUIDs(reports)}
				reportedNode = named.node
				read = append(read, sourceRead{flag: "--from-reports", value: reportsDir, merge: topology.Merge, name: pipeline.SourceReports, in: in,
					joins: named.joins(in),
					why: fmt.Sprintf("none of its %d reports places its node behind a switch, names a host of another source by its RDMA devices' GUIDs "+
						"or gives the NVLink domain of a node another source places", len(reports))})
			}
			// Every other source through the registry: the same Specs and Evidence the aggregator polls.
			more, err := readSources(cmd, &srcs, reportedNode, fromLabels.file)
			if err != nil {
				return err
			}
			read = append(read, more...)
			inputs, err := usableSources(read)
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("topology: stopped before building the tree: %w", err)
			}
			tree, problems, conflicts := pipeline.Infer(inputs, pipeline.Inference{SourcePriority: priority, RootName: rootName, AcceleratorDomains: accelerators})
			warnConflicts(errw, conflicts)
			for _, p := range problems {
				fmt.Fprintln(errw, "warning:", p)
			}
			for _, n := range tree.Unplaced {
				fmt.Fprintf(errw, "warning: host %q reaches no switch and is left out\n", n)
			}
			if n := hypernodegen.NVLinkLeftOut(tree, reportEvidence); n > 0 && !accelerators {
				fmt.Fprintf(errw, "warning: %d nodes report an NVLink domain that no output states: without --accelerator-domains the tree, "+
					"and so its labels, levels and HyperNodes, have no NVLink level; add --accelerator-domains, as the aggregator's chart runs by default "+
					"(aggregator.acceleratorDomains)\n", n)
			}
			topology.KeepNames(tree, prev)           // as the aggregator keeps the names of the tree it built before (nil: none)
			warnVanished(errw, previous, prev, tree) // the switches gone since, and the nodes they leave short (topology_previous.go)
			if err := tree.Validate(); err != nil {
				return fmt.Errorf("the inferred tree is invalid (a bug; please report it with the capture): %w", err)
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("topology: stopped before printing: %w", err)
			}
			outOpts.KueueTopology = kueueName
			if err := outOpts.Validate(); err != nil {
				return err
			}
			out := topologyOutput{format: output.value, keys: keys, memberSelector: memberSelector, opts: outOpts}
			return out.print(cmd.OutOrStdout(), errw, tree, reportEvidence)
		},
	}
	srcs.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&srcs.Capture.File, "from-ibnetdiscover", "", "ibnetdiscover output to read (- for standard input); the same as --capture-file")
	cmd.Flags().StringVar(&reportsDir, "from-reports", "", "folder of NodeFabricReport YAML/JSON files (objects or Lists)")
	output = addOutputFlag(cmd, topologyFormats...)
	keys.AddFlags(cmd.Flags())
	outOpts.Slurm.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&kueueName, "kueue-topology", defaultKueueTopology, "with -o kueue: name of the Kueue Topology (the aggregator's --kueue-topology)")
	cmd.Flags().StringVar(&outOpts.KAITopology, "kai-topology", defaultKAITopology, "with -o kai: name of the KAI Scheduler Topology (the aggregator's --kai-topology)")
	cmd.Flags().StringVar(&previous, "previous", "", "HyperNodes written before (`kubectl get hypernodes -o yaml`: a List, or one or more documents) whose names to keep, as the aggregator keeps them")
	cmd.Flags().BoolVar(&accelerators, "accelerator-domains", false, "make NVLink domains the lowest tier, below the leaves")
	cmd.Flags().StringVar(&rootName, "root-name", topology.TierNameRoot, "name of the top HyperNode")
	cmd.Flags().StringSliceVar(&priority, "source-priority", pipeline.DefaultSourcePriority,
		"sources in the order they win conflicts about a node's switches, as in the aggregator (names: "+strings.Join(pipeline.DefaultSourcePriority, ", ")+")")
	cmd.Flags().StringVar(&memberSelector, "member-selector", hypernodegen.SelectorExact, "how a HyperNode selects its nodes: exactMatch, regexMatch or labelMatch (the aggregator's default node labels)")
	fromUFM.register(cmd.Flags())
	fromLabels.register(cmd.Flags())
	return cmd
}

// sourceRead is one source `fabricmap topology` read: the flag and value that name it in messages, and its
// evidence with its merge rule for pipeline.Infer.
type sourceRead struct {
	flag, value string
	name        string
	in          topology.Input
	merge       func(merged, in topology.Input) (topology.Input, []topology.Conflict)
	// joins, when set, reports whether the source, though it places no node itself, adds to nodes that
	// placedElsewhere says another source places (a report that names a host of the capture by its GUIDs).
	joins func(placedElsewhere func(node string) bool) bool
	// why says what the source lacks when it proves to yield nothing usable.
	why string
}

// usableSources returns the sources' evidence for pipeline.Infer, or nothingUsable for the first source
// that yields nothing usable: a source must place a node (a usable node with a compute link), give switch
// links while another source places nodes below them, or join nodes another source places (sourceRead.joins:
// the aggregator uses such reports too).
func usableSources(read []sourceRead) ([]topology.SourceInput, error) {
	placing := 0
	placedBy := make([]map[string]bool, len(read))
	for i, r := range read {
		placedBy[i] = placedNodes(r.in)
		if len(placedBy[i]) > 0 {
			placing++
		}
	}
	inputs := make([]topology.SourceInput, 0, len(read))
	for i, r := range read {
		placedElsewhere := func(node string) bool {
			for j := range read {
				if j != i && placedBy[j][node] {
					return true
				}
			}
			return false
		}
		joins := r.joins != nil && r.joins(placedElsewhere)
		if len(placedBy[i]) == 0 && !joins && (len(r.in.SwitchLinks) == 0 || placing == 0) {
			return nil, nothingUsable(r.flag, r.value, r.why)
		}
		inputs = append(inputs, topology.SourceInput{Name: r.name, Input: r.in, Merge: r.merge})
	}
	return inputs, nil
}

// placedNodes returns the nodes in places: evidence Build can use with at least one compute link.
func placedNodes(in topology.Input) map[string]bool {
	out := map[string]bool{}
	for _, e := range in.Nodes {
		if e.Check() == "" && slices.ContainsFunc(e.Links, func(l topology.SwitchLink) bool { return !l.Storage }) {
			out[e.Node] = true
		}
	}
	return out
}

// namedNodes names the hosts of a capture or UFM after the reports that list their RDMA devices' GUIDs
// (ibfabric.Options.ReportedNode, ufm.Options.ReportedNode), as the aggregator does, and remembers which
// reports named one: those join the hosts' evidence, though they have no neighbour of their own. The sources
// may ask from several goroutines.
type namedNodes struct {
	byGUID map[ib.GUID]string
	mu     sync.Mutex
	named  map[string]bool
}

// node names the node whose report gives GUID g, "" when none does.
func (n *namedNodes) node(g ib.GUID) string {
	node := n.byGUID[g]
	if node != "" {
		n.mu.Lock()
		if n.named == nil {
			n.named = map[string]bool{}
		}
		n.named[node] = true
		n.mu.Unlock()
	}
	return node
}

// joins reports whether a report adds to a node another source places: the node was named after the report's
// GUIDs, or the report gives its NVLink domain.
func (n *namedNodes) joins(in topology.Input) func(placedElsewhere func(string) bool) bool {
	return func(placedElsewhere func(string) bool) bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return slices.ContainsFunc(in.Nodes, func(e topology.NodeEvidence) bool {
			return e.Check() == "" && placedElsewhere(e.Node) && (n.named[e.Node] || e.NVLinkDomain != "")
		})
	}
}

// nothingUsable is the one error of a `fabricmap topology` source that yields nothing usable, whatever the
// source: the command exits non-zero with a message naming the source by its flag and value, and why.
func nothingUsable(flag, value, why string) error {
	return fmt.Errorf("%s %s: nothing usable: %s", flag, value, why)
}

// warnConflicts prints the nodes two sources place behind different switches; the higher-priority source won.
func warnConflicts(errw io.Writer, conflicts []topology.Conflict) {
	var byLabels []string
	for _, c := range conflicts {
		if c.Dropped == labels.Name { // labels.MergeBelow compares the leaf's name, not its identifier
			byLabels = append(byLabels, fmt.Sprintf("node %q: %s sees no switch named like its leaf label; %s wins", c.Node, c.Kept, c.Kept))
			continue
		}
		fmt.Fprintf(errw, "warning: node %q: %s and %s place it behind different switches; %s wins\n", c.Node, c.Kept, c.Dropped, c.Kept)
	}
	warnAll(errw, "labels: not used", byLabels)
}
