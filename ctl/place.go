package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// placeFlags are the inputs of `fabricmap place`.
type placeFlags struct {
	topology, nodes, pods, gang string
	allocatable                 string
	output                      *outputFlag
	preempt, avoidDegraded      bool
}

func newPlace() *cobra.Command {
	var fl placeFlags
	cmd := &cobra.Command{
		Use:   "place (--topology FILE | --kubeconfig FILE) --gang SPEC",
		Short: "Print where a gang of DP x PP pods would go: rank to node, the tiers reached and why",
		Long: "Plan a gang's placement on the topology tree, from a file or the cluster, without changing anything.\n" +
			"--topology reads the tree (JSON or YAML): the tree ConfigMap or its topology.json list, a List of\n" +
			"HyperNodes (`fabricmap topology -o yaml`, `kubectl get hypernodes -o yaml`), or a Koordinator\n" +
			"ClusterNetworkTopology; that, and HyperNodes selecting nodes by regex or label, need --nodes for the\n" +
			"node names and labels. Node capacity comes from --nodes (a `kubectl get nodes -o yaml` dump; otherwise\n" +
			"every node has --node-allocatable) and usage from --pods (a `kubectl get pods -A -o yaml` dump).\n" +
			"Without --topology, the cluster (--kubeconfig) is read as fabricmap-placer reads it: fabricmap's HyperNodes\n" +
			"(else the ClusterNetworkTopology and node labels), Nodes (taints, reservations) and Pods (every gang form).\n" +
			"--gang is a comma-separated list: pods=M, dp=, pp=, hard-tier= and group-tier= (a tier number or name,\n" +
			"e.g. leaf), name=, priority=, and one or more resource requests per pod (nvidia.com/gpu=8, cpu=16, …),\n" +
			"or instead of pods and requests one role=NAME:PODS:RESOURCE=QUANTITY[+RESOURCE=QUANTITY…] per role\n" +
			"(ranks go to the roles in order; every pod is placed with the largest role request).\n" +
			"Unidentified nodes of a --topology tree (guid-<GUID>: HCAs with the adapter's default description that no\n" +
			"node's report names) are never placement targets: they are skipped, and standard error says so.",
		Example: "  fabricmap place --topology tree.yaml --gang pods=16,dp=2,pp=8,nvidia.com/gpu=8,hard-tier=spine",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl.gang == "" {
				return errors.New("give --gang, e.g. pods=16,pp=8,nvidia.com/gpu=8")
			}
			if err := fl.output.check(); err != nil {
				return err
			}
			g, err := parseGang(fl.gang)
			if err != nil {
				return err
			}
			c, err := fl.cluster(cmd, g)
			if err != nil {
				return err
			}
			plan, err := c.Place(g)
			if fl.preempt && errors.Is(err, placement.ErrNoPlacement) {
				plan, err = c.Preempt(g)
			}
			if err != nil {
				return fmt.Errorf("placing gang %q: %w", g.Name, err)
			}
			return printPlan(cmd.OutOrStdout(), plan, fl.output.value)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.topology, "topology", "", "tree file (JSON or YAML); without it the cluster's HyperNodes are read")
	f.StringVar(&fl.gang, "gang", "", "the gang: pods=M,dp=,pp=,hard-tier=,group-tier=,name=,priority=,RESOURCE=QUANTITY,… or role=NAME:PODS:RES=Q+RES=Q,…")
	f.StringVar(&fl.nodes, "nodes", "", "Nodes dump (`kubectl get nodes -o yaml`) for capacity and labels")
	f.StringVar(&fl.pods, "pods", "", "Pods dump (`kubectl get pods -A -o yaml`) for what is already used")
	f.StringVar(&fl.allocatable, "node-allocatable", "nvidia.com/gpu=8,pods=110", "what every node has when there is no Nodes dump")
	f.BoolVar(&fl.preempt, "preempt", false, "when the gang does not fit, say which lower-priority preemptible gangs (in any form the placer reads; "+
		"priority from spec.priority; preemptible when every pod is labelled "+wellknown.PreemptibleLabel+"=true or "+wellknown.KoordinatorPreemptibleLabel+"=true) it would evict")
	placer.AddAvoidDegradedFlag(f, &fl.avoidDegraded)
	fl.output = addOutputFlag(cmd, "text", "json", "yaml")
	return cmd
}

// parseGang reads a --gang spec.
func parseGang(spec string) (placement.Gang, error) {
	g := placement.Gang{Name: "gang", Request: placement.Resources{}}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return g, fmt.Errorf("--gang: %q is not KEY=VALUE", kv)
		}
		var err error
		switch k {
		case "name":
			g.Name = v
		case "pods", "m":
			g.Pods, err = strconv.Atoi(v)
		case "dp":
			g.DP, err = strconv.Atoi(v)
		case "pp":
			g.PP, err = strconv.Atoi(v)
		case "priority":
			var p int64
			p, err = strconv.ParseInt(v, 10, 32)
			g.Priority = int32(p)
		case "hard-tier":
			if n, e := strconv.Atoi(v); e == nil {
				g.HardTier = n
			} else {
				g.HardTierName = v
			}
		case "group-tier":
			if n, e := strconv.Atoi(v); e == nil {
				g.GroupTier = n
			} else {
				g.GroupTierName = v
			}
		case "role":
			var r placement.Role
			r, err = parseRole(v)
			g.Roles = append(g.Roles, r)
		default:
			var q int64
			q, err = quantity(k, v)
			g.Request[k] = q
		}
		if err != nil {
			return g, fmt.Errorf("--gang %s: %w", k, err)
		}
	}
	return g, nil
}

// parseRole reads NAME:PODS:RES=Q[+RES=Q…], one role of a --gang spec.
func parseRole(v string) (placement.Role, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return placement.Role{}, fmt.Errorf("%q is not NAME:PODS:RESOURCE=QUANTITY[+RESOURCE=QUANTITY…]", v)
	}
	pods, err := strconv.Atoi(parts[1])
	if err != nil {
		return placement.Role{}, fmt.Errorf("role %s pods: %w", parts[0], err)
	}
	r := placement.Role{Name: parts[0], Pods: pods, Request: placement.Resources{}}
	for _, kv := range strings.Split(parts[2], "+") {
		k, q, ok := strings.Cut(kv, "=")
		if !ok {
			return r, fmt.Errorf("role %s: %q is not RESOURCE=QUANTITY", parts[0], kv)
		}
		if r.Request[k], err = quantity(k, q); err != nil {
			return r, fmt.Errorf("role %s %s: %w", parts[0], k, err)
		}
	}
	return r, nil
}

// quantity parses a Kubernetes quantity in placement's units: millicores for cpu, the base unit otherwise.
func quantity(name, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	return podread.QuantityValue(name, q), nil
}

// cluster builds the placement snapshot from the files or the cluster with the placer's adapter
// (placer.Snapshot): the same nodes, usage, reservations, taints and running gangs the placer would see.
func (fl *placeFlags) cluster(cmd *cobra.Command, g placement.Gang) (*placement.Cluster, error) {
	var st *placer.Snapshot
	var err error
	if fl.topology == "" {
		st, err = readLive(cmd)
	} else {
		st, err = fl.readFiles(cmd.ErrOrStderr())
	}
	if err != nil {
		return nil, err
	}
	st.AvoidDegraded = fl.avoidDegraded
	c, ignored, err := st.Cluster(g.Name, nil, placer.Preemption{Enabled: true})
	if err != nil {
		return nil, err
	}
	warnAll(cmd.ErrOrStderr(), "nodes outside the topology, not used", ignored)
	warnAll(cmd.ErrOrStderr(), "nodes skipped for degraded links (--avoid-degraded)", st.SkippedForLinks(g.Name, nil, g.PodRequest()))
	return c, nil
}

// readFiles builds the snapshot from --topology, --nodes and --pods; without Nodes every node of the tree
// gets --node-allocatable. The tree's unidentified nodes are no placement targets (skipUnidentified, said on
// errw).
func (fl *placeFlags) readFiles(errw io.Writer) (*placer.Snapshot, error) {
	var nodes []corev1.Node
	var pods []corev1.Pod
	if fl.nodes != "" {
		if err := readObjects(fl.nodes, "Node", &nodes); err != nil {
			return nil, err
		}
	}
	if fl.pods != "" {
		if err := readObjects(fl.pods, "Pod", &pods); err != nil {
			return nil, err
		}
	}
	tree, err := readTopologyFile(fl.topology, nodes)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		if nodes, err = fl.defaultNodes(tree); err != nil {
			return nil, err
		}
	}
	nodes = skipUnidentified(errw, fl.topology, tree, nodes)
	return placer.NewSnapshot(tree, nodes, pods, time.Now())
}

// maxSkippedNamed is how many skipped unidentified nodes the warning names.
const maxSkippedNamed = 10

// skipUnidentified drops from nodes the tree's unidentified nodes (ib.IsGUIDNodeName: an HCA with the adapter's
// default description that no node's report names, which a capture or UFM names "guid-<GUID>"): they are no
// Kubernetes nodes, so no rank may go there, though they stay in the tree. It says on errw how many the tree
// file (path) holds and names the first.
func skipUnidentified(errw io.Writer, path string, tree *topology.Tree, nodes []corev1.Node) []corev1.Node {
	var skipped []string
	for _, d := range tree.Domains {
		for _, n := range d.Nodes {
			if ib.IsGUIDNodeName(n) {
				skipped = append(skipped, n)
			}
		}
	}
	if len(skipped) == 0 {
		return nodes
	}
	slices.Sort(skipped)
	skipped = slices.Compact(skipped)
	more := ""
	if len(skipped) > maxSkippedNamed {
		more = fmt.Sprintf(" and %d more", len(skipped)-maxSkippedNamed)
	}
	fmt.Fprintf(errw, "warning: --topology %s: %d unidentified nodes skipped, never placement targets (HCAs with the adapter's default description that no node's report names): %s%s\n",
		path, len(skipped), strings.Join(skipped[:min(len(skipped), maxSkippedNamed)], ", "), more)
	return slices.DeleteFunc(nodes, func(n corev1.Node) bool { return ib.IsGUIDNodeName(n.Name) })
}

// defaultNodes returns a Node with --node-allocatable for every node of the tree.
func (fl *placeFlags) defaultNodes(tree *topology.Tree) ([]corev1.Node, error) {
	alloc := corev1.ResourceList{}
	for _, kv := range strings.Split(fl.allocatable, ",") {
		k, v, _ := strings.Cut(kv, "=")
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("--node-allocatable %s: %w", k, err)
		}
		alloc[corev1.ResourceName(k)] = q
	}
	var nodes []corev1.Node
	for _, name := range slices.Sorted(maps.Keys(tree.Domains)) {
		for _, n := range tree.Domains[name].Nodes {
			node := corev1.Node{Status: corev1.NodeStatus{Allocatable: alloc}}
			node.Name = n
			nodes = append(nodes, node)
		}
	}
	return nodes, nil
}

// readTopologyFile reads a tree file (YAML or JSON, any form treeread.ParseTree reads); a
// ClusterNetworkTopology, and HyperNodes that select nodes by regex or label, need the Nodes for their names
// and labels.
func readTopologyFile(path string, nodes []corev1.Node) (*topology.Tree, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--topology: %w", err)
	}
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("--topology %s: %w", path, err)
	}
	var labels map[string]map[string]string
	if len(nodes) > 0 {
		labels = placer.NodeLabels(nodes)
	}
	t, err := treeread.ParseTree(data, labels)
	if err != nil && labels == nil {
		return nil, fmt.Errorf("--topology %s: %w (give --nodes for the node names and labels)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--topology %s: %w", path, err)
	}
	return t, nil
}

// readObjects reads objects of kind from a YAML or JSON file (single objects or Lists, one or more documents)
// into out, a pointer to a slice of the kind's Go type.
func readObjects[T any](path, kind string, out *[]T) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var obj struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("%s, document %d: %w", path, doc, err)
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s, document %d: %w", path, doc, err)
		}
		items := []json.RawMessage{raw}
		if obj.Kind == "List" || obj.Kind == kind+"List" {
			items = obj.Items
		} else if obj.Kind != kind {
			return fmt.Errorf("%s, document %d: a %s, want %s objects", path, doc, obj.Kind, kind)
		}
		for _, it := range items {
			var v T
			if err := json.Unmarshal(it, &v); err != nil {
				return fmt.Errorf("%s, document %d: %w", path, doc, err)
			}
			*out = append(*out, v)
		}
	}
	return nil
}

// readLive reads the snapshot from the cluster as the placer does (placer.ReadSnapshot): fabricmap's
// HyperNodes, else the ClusterNetworkTopology and node labels; Nodes and Pods.
func readLive(cmd *cobra.Command) (*placer.Snapshot, error) {
	cfg, err := restConfig(cmd)
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	st, err := placer.ReadSnapshot(cmd.Context(), c, c, time.Now())
	if errors.Is(err, placer.ErrNoTopology) {
		return nil, fmt.Errorf("%w; give --topology FILE", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return st, nil
}

// printPlan writes the plan as text (a summary, then rank, node and group) or as JSON/YAML.
func printPlan(w io.Writer, p *placement.Plan, output string) error {
	switch output {
	case "json", "yaml":
		return writeObject(w, p, output)
	case "text":
	default:
		return fmt.Errorf("--output %q: want text, json or yaml", output)
	}
	fmt.Fprintf(w, "gang %s: %d pods in %s %s (tier %d); PP groups within tier %d (%s)\n",
		p.Gang, len(p.Ranks), p.GangTierName, p.GangDomain, p.GangTier, p.GroupTier, p.GroupTierName)
	if len(p.Victims) > 0 {
		fmt.Fprintf(w, "preempts: %s\n", strings.Join(p.Victims, ", "))
	}
	fmt.Fprintln(w, p.Explanation)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "RANK\tNODE\tGROUP\tGROUP DOMAIN")
	if len(p.Roles) > 0 {
		fmt.Fprint(tw, "\tROLE")
	}
	fmt.Fprintln(tw)
	per := len(p.Ranks) / max(len(p.Groups), 1)
	for i, n := range p.Ranks {
		g := i / max(per, 1)
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s", i, n, g, p.Groups[min(g, len(p.Groups)-1)])
		if i < len(p.Roles) {
			fmt.Fprintf(tw, "\t%s", p.Roles[i])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
