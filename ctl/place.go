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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/topology"
)

// placeFlags are the inputs of `fabricmap place`.
type placeFlags struct {
	topology, nodes, pods, gang, output string
	allocatable                         string
	preempt                             bool
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
			"Without --topology, HyperNodes, Nodes and Pods are read from the cluster (--kubeconfig).\n" +
			"--gang is a comma-separated list: pods=M, dp=, pp=, hard-tier= and group-tier= (a tier number or name,\n" +
			"e.g. leaf), name=, priority=, and one or more resource requests per pod (nvidia.com/gpu=8, cpu=16, …),\n" +
			"or instead of pods and requests one role=NAME:PODS:RESOURCE=QUANTITY[+RESOURCE=QUANTITY…] per role\n" +
			"(ranks go to the roles in order; every pod is placed with the largest role request).",
		Example: "  fabricmap place --topology tree.yaml --gang pods=16,dp=2,pp=8,nvidia.com/gpu=8,hard-tier=spine",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl.gang == "" {
				return errors.New("give --gang, e.g. pods=16,pp=8,nvidia.com/gpu=8")
			}
			g, err := parseGang(fl.gang)
			if err != nil {
				return err
			}
			c, err := fl.cluster(cmd)
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
			return printPlan(cmd.OutOrStdout(), plan, fl.output)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.topology, "topology", "", "tree file (JSON or YAML); without it the cluster's HyperNodes are read")
	f.StringVar(&fl.gang, "gang", "", "the gang: pods=M,dp=,pp=,hard-tier=,group-tier=,name=,priority=,RESOURCE=QUANTITY,… or role=NAME:PODS:RES=Q+RES=Q,…")
	f.StringVar(&fl.nodes, "nodes", "", "Nodes dump (`kubectl get nodes -o yaml`) for capacity and labels")
	f.StringVar(&fl.pods, "pods", "", "Pods dump (`kubectl get pods -A -o yaml`) for what is already used")
	f.StringVar(&fl.allocatable, "node-allocatable", "nvidia.com/gpu=8,pods=110", "what every node has when there is no Nodes dump")
	f.BoolVar(&fl.preempt, "preempt", false, "when the gang does not fit, say which lower-priority preemptible gangs (pods labelled "+
		gangLabel+", priority from spec.priority, preemptible when labelled "+preemptibleLabel+"=true) it would evict")
	f.StringVarP(&fl.output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}

// Pod labels `fabricmap place --preempt` reads running gangs from (Koordinator's and the scheduler-plugins' names).
const (
	gangLabel        = "pod-group.scheduling.sigs.k8s.io"
	preemptibleLabel = "quota.scheduling.koordinator.sh/preemptible"
)

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
	return placer.QuantityValue(name, q), nil
}

// cluster builds the placement snapshot from the files or the cluster.
func (fl *placeFlags) cluster(cmd *cobra.Command) (*placement.Cluster, error) {
	var nodes []corev1.Node
	var pods []corev1.Pod
	var tree *topology.Tree
	var err error
	if fl.topology == "" {
		tree, nodes, pods, err = readLive(cmd)
	} else {
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
		tree, err = readTopologyFile(fl.topology, nodes)
	}
	if err != nil {
		return nil, err
	}
	f, err := placement.NewFabric(tree)
	if err != nil {
		return nil, fmt.Errorf("the topology: %w", err)
	}
	pnodes, err := fl.placementNodes(f, nodes, pods)
	if err != nil {
		return nil, err
	}
	c, ignored, err := placement.NewCluster(f, pnodes, runningGangs(pods))
	if err != nil {
		return nil, err
	}
	warnAll(cmd.ErrOrStderr(), "nodes outside the topology, not used", ignored)
	return c, nil
}

// placementNodes turns Nodes and Pods into capacities; without Nodes every fabric node gets --node-allocatable.
func (fl *placeFlags) placementNodes(f *placement.Fabric, nodes []corev1.Node, pods []corev1.Pod) ([]placement.Node, error) {
	used := map[string]placement.Resources{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		u := used[p.Spec.NodeName]
		if u == nil {
			u = placement.Resources{}
			used[p.Spec.NodeName] = u
		}
		for k, q := range placer.PodRequest(p) {
			u[k] += q
		}
	}
	var out []placement.Node
	if len(nodes) == 0 {
		alloc := placement.Resources{}
		for _, kv := range strings.Split(fl.allocatable, ",") {
			k, v, _ := strings.Cut(kv, "=")
			q, err := quantity(k, v)
			if err != nil {
				return nil, fmt.Errorf("--node-allocatable %s: %w", k, err)
			}
			alloc[k] = q
		}
		for _, n := range f.Nodes() {
			out = append(out, placement.Node{Name: n, Allocatable: alloc, Used: used[n]})
		}
		return out, nil
	}
	for i := range nodes {
		n := &nodes[i]
		out = append(out, placement.Node{Name: n.Name, Allocatable: placer.ResourceList(n.Status.Allocatable), Used: used[n.Name]})
	}
	return out, nil
}

// runningGangs groups running pods by their gang label into placement's running gangs.
func runningGangs(pods []corev1.Pod) []placement.Running {
	byName := map[string]*placement.Running{}
	for i := range pods {
		p := &pods[i]
		name := p.Labels[gangLabel]
		if name == "" || p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		key := p.Namespace + "/" + name
		r := byName[key]
		if r == nil {
			r = &placement.Running{Name: key, Pods: map[string]int{}, Request: placer.PodRequest(p), Preemptible: p.Labels[preemptibleLabel] == "true"}
			if p.Spec.Priority != nil {
				r.Priority = *p.Spec.Priority
			}
			byName[key] = r
		}
		r.Pods[p.Spec.NodeName]++
	}
	out := make([]placement.Running, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[k])
	}
	return out
}

// readTopologyFile reads a tree file; a ClusterNetworkTopology, and HyperNodes that select nodes by regex or
// label, need the Nodes for their names and labels.
func readTopologyFile(path string, nodes []corev1.Node) (*topology.Tree, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--topology: %w", err)
	}
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("--topology %s: %w", path, err)
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(data, &kind)
	if kind.Kind != "ClusterNetworkTopology" {
		var labels map[string]map[string]string
		if len(nodes) > 0 {
			labels = placer.NodeLabels(nodes)
		}
		t, err := placement.ParseTree(data, labels)
		if err != nil {
			return nil, fmt.Errorf("--topology %s: %w", path, err)
		}
		return t, nil
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("--topology %s is a ClusterNetworkTopology: give --nodes for the node labels", path)
	}
	layers, err := placement.ParseClusterNetworkTopology(data)
	if err != nil {
		return nil, fmt.Errorf("--topology %s: %w", path, err)
	}
	t, _, err := placement.TreeFromLabels(layers, placer.NodeLabels(nodes))
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

// readLive reads HyperNodes, Nodes and Pods from the cluster.
func readLive(cmd *cobra.Command) (*topology.Tree, []corev1.Node, []corev1.Pod, error) {
	kubeconfig, _ := cmd.Flags().GetString("kubeconfig")
	cfg, err := cli.RESTConfig(kubeconfig)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	ctx := cmd.Context()
	var hns topologyv1alpha1.HyperNodeList
	if err := c.List(ctx, &hns); err != nil {
		return nil, nil, nil, fmt.Errorf("listing HyperNodes: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, nil, nil, fmt.Errorf("listing Nodes: %w", err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return nil, nil, nil, fmt.Errorf("listing Pods: %w", err)
	}
	if len(hns.Items) == 0 {
		return nil, nil, nil, errors.New("the cluster has no HyperNodes; give --topology FILE")
	}
	tree, err := placement.TreeFromHyperNodes(hns.Items, placer.NodeLabels(nodes.Items))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the cluster's HyperNodes: %w", err)
	}
	return tree, nodes.Items, pods.Items, nil
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
