package test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// poolLabel puts a node in the pool of one test case; each case's pods select their pool, so the cases share
// fabricmap's tree and label keys but not nodes.
const poolLabel = "fabricmap.test/pool"

// gpuResource is the extended resource of NVIDIA's device plugin; each node has 8 and each pod asks for 8, so a
// node holds one pod of a gang.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// leaf is one leaf switch of the test fabric: the spine above it and the nodes below it.
type leaf struct {
	pool, spine, name string
	nodes             int
	// sick are the nodes (from 1) whose compute link fabric health judged degraded.
	sick []int
	// nvlink gives the NVLink domain of each node below the leaf, in order; empty: none has one.
	nvlink []string
}

// The NVLink domains (cluster UUID and clique) of the nodes behind leaf-e1.
const (
	nvlinkDomainX = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.1"
	nvlinkDomainY = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.2"
)

// fabric is the test fabric, one pool per case, every spine cabled to one core switch:
//   - lowest: leaf-a1 (4 nodes) and leaf-a2 (6) under spine-a: a gang of 4 fits either leaf; the tightest is
//     leaf-a1;
//   - fragmented: leaf-b1 and leaf-b2 (3 nodes each) under spine-b1, leaf-b3 (2) and leaf-b4 (1) under
//     spine-b2: a gang of 4 (DP 2 x PP 2) fits no leaf and one spine only, spine-b1, where only 2 + 2 keeps
//     each pipeline group inside a leaf (3 + 1 would put one across the spine);
//   - degraded: leaf-c1 (4 nodes, one with a degraded link) and leaf-c2 (5) under spine-c: leaf-c1 would be
//     the tightest fit, but its degraded node takes no new pod, so the gang goes to leaf-c2;
//   - nvlink: leaf-e1 (5 nodes: NVLink domain X of 3, Y of 2) under spine-e: a gang of 2 held to the
//     accelerator tier lands in Y, the tightest NVLink domain;
//   - bad: leaf-d1 (2 nodes) under spine-d, for PodGroups that cannot be placed.
var fabric = []leaf{
	{pool: "lowest", spine: "spine-a", name: "leaf-a1", nodes: 4},
	{pool: "lowest", spine: "spine-a", name: "leaf-a2", nodes: 6},
	{pool: "fragmented", spine: "spine-b1", name: "leaf-b1", nodes: 3},
	{pool: "fragmented", spine: "spine-b1", name: "leaf-b2", nodes: 3},
	{pool: "fragmented", spine: "spine-b2", name: "leaf-b3", nodes: 2},
	{pool: "fragmented", spine: "spine-b2", name: "leaf-b4", nodes: 1},
	{pool: "degraded", spine: "spine-c", name: "leaf-c1", nodes: 4, sick: []int{2}},
	{pool: "degraded", spine: "spine-c", name: "leaf-c2", nodes: 5},
	{pool: "nvlink", spine: "spine-e", name: "leaf-e1", nodes: 5,
		nvlink: []string{nvlinkDomainX, nvlinkDomainX, nvlinkDomainX, nvlinkDomainY, nvlinkDomainY}},
	{pool: "bad", spine: "spine-d", name: "leaf-d1", nodes: 2},
}

// coreSwitch is the switch every spine is cabled to: the root of the tree.
const coreSwitch = "core"

// nodeName names the i-th node (from 1) below l.
func nodeName(l leaf, i int) string { return fmt.Sprintf("%s-node-%d", l.name, i) }

// fabricInput is the evidence the aggregator would merge for fabric: each node's report of its one leaf link,
// and the switch-to-switch cables a fabric-wide source sees.
func fabricInput() topology.Input {
	var in topology.Input
	spines := map[string]bool{}
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			e := topology.NodeEvidence{Node: nodeName(l, i), Source: "reports", SelfReported: true,
				Links: []topology.SwitchLink{{SwitchID: topology.SwitchID("local", l.name), SwitchName: l.name, Port: fmt.Sprint(i)}}}
			if len(l.nvlink) > 0 {
				e.NVLinkDomain = l.nvlink[i-1]
			}
			in.Nodes = append(in.Nodes, e)
		}
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: topology.SwitchID("local", l.name), AName: l.name,
			B: topology.SwitchID("local", l.spine), BName: l.spine, Source: "ibnetdiscover"})
		spines[l.spine] = true
	}
	for _, s := range slices.Sorted(maps.Keys(spines)) {
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: topology.SwitchID("local", s), AName: s,
			B: topology.SwitchID("local", coreSwitch), BName: coreSwitch, Source: "ibnetdiscover"})
	}
	return in
}

// keys are the label keys of the leaf, spine and NVLink domain tiers, as `fabricmap get tiers` gives them.
type keys struct{ leaf, spine, nvlink string }

// fabricLabels infers fabricmap's tree from fabricInput as the aggregator does (NVLink domains as accelerator
// domains) and returns the node labels the aggregator writes for it and the leaf, spine and NVLink keys. It fails the test when the tree is not the fabric's
// shape (domains named after their switches), so that the cases' expectations mean what they say.
func fabricLabels(t *testing.T) (map[string]map[string]string, keys) {
	t.Helper()
	in := fabricInput()
	tree, problems := topology.Build(in, topology.BuildOptions{RootName: topology.TierNameRoot, AcceleratorDomains: true})
	if len(problems) > 0 {
		t.Fatalf("inferring the test fabric: %v", problems)
	}
	lk := hypernodegen.DefaultLabelKeys()
	k := keys{leaf: lk.Tiers[0], spine: lk.Tiers[1], nvlink: lk.Accelerator}
	labels := hypernodegen.DesiredNodeLabels(tree, in.Nodes, lk)
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			n := nodeName(l, i)
			if got := labels[n]; got[k.leaf] != l.name || got[k.spine] != l.spine {
				t.Fatalf("node %s is labelled %v; want %s=%s and %s=%s", n, got, k.leaf, l.name, k.spine, l.spine)
			}
		}
	}
	return labels, k
}

// createNodes creates every node of fabric, labelled with labels, its pool and (for a sick one) the link-health
// label the aggregator writes, Ready, untainted and with the capacity of an 8-GPU node.
func createNodes(t *testing.T, ctx context.Context, labels map[string]map[string]string) {
	t.Helper()
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			name := nodeName(l, i)
			nl := map[string]string{poolLabel: l.pool}
			maps.Copy(nl, labels[name])
			if slices.Contains(l.sick, i) {
				nl[wellknown.LinkHealthLabel] = wellknown.LinkHealthDegraded
			}
			createNode(t, ctx, name, nl)
		}
	}
}

// createNode creates the Node name with labels (and its hostname), Ready, untainted and with the capacity of an
// 8-GPU node.
func createNode(t *testing.T, ctx context.Context, name string, labels map[string]string) {
	t.Helper()
	c := testenv.Shared.Client
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		gpuResource:           resource.MustParse("8"),
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	maps.Copy(n.Labels, labels)
	if err := c.Create(ctx, n); err != nil {
		t.Fatalf("creating Node %s: %v", name, err)
	}
	n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatalf("setting Node %s Ready with capacity: %v", name, err)
	}
	// The API server's TaintNodesByCondition admission taints a new Node not-ready; the node lifecycle
	// controller (kube-controller-manager, not running here) would lift it once the node is Ready.
	n.Spec.Taints = nil
	if err := c.Update(ctx, n); err != nil {
		t.Fatalf("removing the not-ready taint of Node %s: %v", name, err)
	}
}
