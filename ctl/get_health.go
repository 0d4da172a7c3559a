package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

func newGetHealth() *cobra.Command {
	var o getOptions
	var plan string
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Print what fabric health finds wrong with the links, worst first",
		Long: "Judge the fabric's links as the aggregator does (the same assessment on the same input): the ports of the\n" +
			"cluster's NodeFabricReports (trained rate and width, the agents' link conditions, the switch each is cabled\n" +
			"to) on the tree of fabricmap's HyperNodes. It finds crossed rails, links slower or narrower than their tier's,\n" +
			"erroring, flapping and down links, nodes that lost their leaf (the aggregator's fabricmap.io/uplink-lost\n" +
			"annotation on a Node whose report names no switch any more) or some of their switches (its\n" +
			"fabricmap.io/switch-lost annotation: switches gone from the tree while the node stays placed), HyperNodes another writer made over fabricmap's\n" +
			"nodes (Volcano's own discovery) and, with --expected-topology, every difference from the tree an admin approved. The findings print as a tree, worst first: by severity (critical, warning, info), then by domain.\n" +
			"-o json or yaml prints the findings, the nodes judged degraded or down and each domain's degraded uplinks.\n" +
			"Switch-to-switch links are judged by the aggregator alone, which reads the capture.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var expected *topology.Tree
			if plan != "" {
				t, err := pipeline.ReadExpectedTopology(plan)
				if err != nil {
					return fmt.Errorf("--expected-topology: %w", err)
				}
				expected = t
			}
			return runGet(cmd, o, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				a, err := assessCluster(ctx, r, errw, expected)
				if err != nil {
					return err
				}
				return printHealth(w, a, o.output.value)
			})
		},
	}
	o.output = addOutputFlag(cmd, "tree", "json", "yaml")
	cmd.Flags().StringVar(&plan, "expected-topology", "", "JSON `FILE` of the tree an admin approved, as the aggregator's --expected-topology (what fabricmap topology -o json prints): its differences are drift findings")
	return cmd
}

// assessCluster reads the cluster's NodeFabricReports, fabricmap's HyperNodes and the Nodes' metadata, and judges
// the links with pipeline.AssessHealth: the nodes that lost their uplinks are those whose Node carries
// wellknown.UplinkLostAnnotation and that still have a report (pipeline.LostUplinksFromNodes), those that lost
// some of their switches those whose Node carries wellknown.SwitchLostAnnotation (LostSwitchesFromNodes).
// Without the HyperNode CRD it judges the ports without the tree, and without the Nodes it judges no lost
// uplink or switch, saying so on errw.
func assessCluster(ctx context.Context, r client.Reader, errw io.Writer, expected *topology.Tree) (health.Assessment, error) {
	var reports v1alpha1.NodeFabricReportList
	if err := r.List(ctx, &reports); err != nil {
		if meta.IsNoMatchError(err) {
			return health.Assessment{}, errors.New("NodeFabricReport CRD not installed: fabricmap's chart installs it")
		}
		return health.Assessment{}, fmt.Errorf("listing NodeFabricReports: %w", err)
	}
	all, err := listHyperNodes(ctx, r, true) // fabricmap's, and the others that hold its nodes
	if errors.Is(err, errNoHyperNodeCRD) {
		fmt.Fprintln(errw, "warning: HyperNode CRD not installed (Volcano): the links are judged without the tree")
		all, err = nil, nil
	}
	if err != nil {
		return health.Assessment{}, err
	}
	hns := slices.DeleteFunc(slices.Clone(all), func(hn topologyv1alpha1.HyperNode) bool { return !hypernodegen.Owned(hn.Labels) })
	nodeLabels, annotations, err := listNodeMetadata(ctx, r)
	if err != nil {
		fmt.Fprintf(errw, "warning: cannot read the Nodes: lost uplinks and switches are not judged: %v\n", topology.Printable(err.Error()))
		if treeread.NeedsNodeLabels(hns) {
			fmt.Fprintln(errw, "warning: cannot resolve regex and label members without the Nodes")
		}
	}
	tree := viewHyperNodes(errw, hns, nodeLabels)
	lost, err := pipeline.LostUplinksFromNodes(annotations, reports.Pointers())
	if err != nil {
		fmt.Fprintln(errw, "warning:", topology.Printable(err.Error()))
	}
	lostSwitches, err := pipeline.LostSwitchesFromNodes(annotations)
	if err != nil {
		fmt.Fprintln(errw, "warning:", topology.Printable(err.Error()))
	}
	a := pipeline.AssessHealth(tree, reports.Pointers(), nil, expected, lost, lostSwitches)
	return withForeignHyperNodes(a, all, tree, nodeLabels), nil
}

// withForeignHyperNodes adds to a, first, a critical finding for each HyperNode not made by fabricmap whose
// members are nodes of tree or fabricmap's HyperNodes (hypernodegen.ForeignHyperNodes): a second writer of
// HyperNodes, such as Volcano's own discovery, gives those nodes two parents.
func withForeignHyperNodes(a health.Assessment, all []topologyv1alpha1.HyperNode, tree *topology.Tree, nodeLabels map[string]map[string]string) health.Assessment {
	placed := map[string]bool{}
	for _, d := range tree.Domains {
		for _, n := range d.Nodes {
			placed[n] = true
		}
	}
	foreign := hypernodegen.ForeignHyperNodes(all, placed, nodeLabels)
	if len(foreign) == 0 {
		return a
	}
	findings := make([]health.Finding, 0, len(foreign)+len(a.Findings))
	for _, f := range foreign {
		findings = append(findings, f.Finding())
	}
	a.Findings = append(findings, a.Findings...)
	return a
}

// healthJSON is what -o json and yaml print: every list and map present, empty when there is nothing.
type healthJSON struct {
	Findings        []health.Finding  `json:"findings"`
	DegradedNodes   map[string]string `json:"degradedNodes"`
	DegradedUplinks map[string]int    `json:"degradedUplinks"`
}

// printHealth writes an assessment in the chosen format.
func printHealth(w io.Writer, a health.Assessment, output string) error {
	switch output {
	case "json", "yaml":
		out := healthJSON{Findings: a.Findings, DegradedNodes: a.DegradedNodes, DegradedUplinks: a.DegradedUplinks}
		if out.Findings == nil {
			out.Findings = []health.Finding{}
		}
		if out.DegradedNodes == nil {
			out.DegradedNodes = map[string]string{}
		}
		if out.DegradedUplinks == nil {
			out.DegradedUplinks = map[string]int{}
		}
		return writeObject(w, out, output)
	case "tree":
		return healthText(w, a)
	default:
		return fmt.Errorf("--output %q: want tree, json or yaml", output)
	}
}

// noDomain groups the findings that name no domain.
const noDomain = "(no domain)"

// healthText writes the findings as a tree: a summary line, then each severity (worst first) with its
// domains (sorted; findings without one last) and their findings in the assessment's order; then the nodes
// judged degraded or down and the domains with degraded uplinks. Every name goes through topology.Printable.
func healthText(w io.Writer, a health.Assessment) error {
	tw := &textWriter{w: w}
	if len(a.Findings) == 0 {
		tw.line("No link findings: every judged link is healthy, and no node lost its uplinks or a switch.")
		return tw.err
	}
	bySeverity := map[health.Severity]map[string][]health.Finding{}
	var severities []health.Severity
	for _, f := range a.Findings {
		if bySeverity[f.Severity] == nil {
			bySeverity[f.Severity] = map[string][]health.Finding{}
			severities = append(severities, f.Severity)
		}
		d := f.Domain
		if d == "" {
			d = noDomain
		}
		bySeverity[f.Severity][d] = append(bySeverity[f.Severity][d], f)
	}
	slices.SortFunc(severities, func(x, y health.Severity) int { return int(y - x) })
	counts := make([]string, 0, len(severities))
	for _, s := range severities {
		n := 0
		for _, fs := range bySeverity[s] {
			n += len(fs)
		}
		counts = append(counts, fmt.Sprintf("%d %s", n, s.String()))
	}
	noun := "link findings"
	if len(a.Findings) == 1 {
		noun = "link finding"
	}
	tw.line(fmt.Sprintf("%d %s: %s", len(a.Findings), noun, strings.Join(counts, ", ")))
	for _, s := range severities {
		domains := slices.Sorted(maps.Keys(bySeverity[s]))
		if i := slices.Index(domains, noDomain); i >= 0 {
			domains = append(slices.Delete(domains, i, i+1), noDomain)
		}
		n := 0
		for _, d := range domains {
			n += len(bySeverity[s][d])
		}
		tw.line(fmt.Sprintf("%s (%d)", s.String(), n))
		for i, d := range domains {
			branch, indent := branches(i == len(domains)-1)
			tw.line(branch + d)
			fs := bySeverity[s][d]
			for j, f := range fs {
				leaf, _ := branches(j == len(fs)-1)
				tw.line(indent + leaf + findingLine(f))
			}
		}
	}
	if len(a.DegradedNodes) > 0 {
		parts := make([]string, 0, len(a.DegradedNodes))
		for _, n := range slices.Sorted(maps.Keys(a.DegradedNodes)) {
			parts = append(parts, n+" ("+a.DegradedNodes[n]+")")
		}
		tw.line(fmt.Sprintf("nodes degraded or down (%d): %s", len(parts), strings.Join(parts, ", ")))
	}
	if len(a.DegradedUplinks) > 0 {
		parts := make([]string, 0, len(a.DegradedUplinks))
		for _, d := range slices.Sorted(maps.Keys(a.DegradedUplinks)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", d, a.DegradedUplinks[d]))
		}
		tw.line(fmt.Sprintf("domains with degraded uplinks (%d): %s", len(parts), strings.Join(parts, ", ")))
	}
	return tw.err
}

// branches returns the prefix of an item of a tree and the prefix of the lines below it.
func branches(last bool) (branch, indent string) {
	if last {
		return "└── ", "    "
	}
	return "├── ", "│   "
}

// findingLine is one finding: its kind and its message, which names what and where.
func findingLine(f health.Finding) string {
	return string(f.Kind) + "  " + f.Message
}

// textWriter writes lines through topology.Printable, keeping the first error.
type textWriter struct {
	w   io.Writer
	err error
}

func (t *textWriter) line(s string) {
	if t.err == nil {
		_, t.err = fmt.Fprintln(t.w, topology.Printable(s))
	}
}
