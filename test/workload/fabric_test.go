package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
)

// poolLabel puts a node in the pool of one test case; each case's pods select their pool, so the cases share
// fabricmap's tree and label keys but not nodes.
const poolLabel = "fabricmap.test/pool"

// gpuResource is the extended resource of NVIDIA's device plugin; each node has 8 and each pod asks for 8, so a
// node holds one pod of a gang.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// The NVLink domains (cluster UUID and clique) of the two pairs of nodes behind leaf-n1.
const (
	nvlinkDomainX = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.1"
	nvlinkDomainY = "3f1c9a2e-7b4d-4e8a-9c61-0d2e4f6a8b10.2"
)

// leaf is one leaf switch of the test fabric: the spine above it and the nodes below it.
type leaf struct {
	pool, spine, name string
	nodes             int
	// nvlink gives the NVLink domain of each node below the leaf, in order; empty: none has one.
	nvlink []string
}

// fabric is the test fabric, one pool per case, every spine cabled to one core switch:
//   - leaf: leaf-l1 (4 nodes) and leaf-l2 (3) under spine-l: a gang of 4 that must share a leaf fits only
//     behind leaf-l1;
//   - nvlink: leaf-n1 (4 nodes: two NVLink domains of 2) and leaf-n2 (4, no NVLink domain, so each node is its
//     own) under spine-n: a gang of 2 that must share an NVLink domain fits only in X or Y;
//   - pending and spine, one shape twice: leaf-?1 and leaf-?2 (3 nodes each) under spine-?1, leaf-?3 (2) and
//     leaf-?4 (1) under spine-?2: a gang of 4 fits no leaf, and in one spine only in spine-?1, across its
//     two leaves.
var fabric = []leaf{
	{pool: "leaf", spine: "spine-l", name: "leaf-l1", nodes: 4},
	{pool: "leaf", spine: "spine-l", name: "leaf-l2", nodes: 3},
	{pool: "nvlink", spine: "spine-n", name: "leaf-n1", nodes: 4,
		nvlink: []string{nvlinkDomainX, nvlinkDomainX, nvlinkDomainY, nvlinkDomainY}},
	{pool: "nvlink", spine: "spine-n", name: "leaf-n2", nodes: 4},
	{pool: "pending", spine: "spine-p1", name: "leaf-p1", nodes: 3},
	{pool: "pending", spine: "spine-p1", name: "leaf-p2", nodes: 3},
	{pool: "pending", spine: "spine-p2", name: "leaf-p3", nodes: 2},
	{pool: "pending", spine: "spine-p2", name: "leaf-p4", nodes: 1},
	{pool: "spine", spine: "spine-s1", name: "leaf-s1", nodes: 3},
	{pool: "spine", spine: "spine-s1", name: "leaf-s2", nodes: 3},
	{pool: "spine", spine: "spine-s2", name: "leaf-s3", nodes: 2},
	{pool: "spine", spine: "spine-s2", name: "leaf-s4", nodes: 1},
}

// coreSwitch is the switch every spine is cabled to: the root of the tree.
const coreSwitch = "core"

// nodeName names the i-th node (from 1) below l.
func nodeName(l leaf, i int) string { return fmt.Sprintf("%s-node-%d", l.name, i) }

// fabricInput is the evidence the aggregator would merge for fabric: each node's report of its one leaf link
// and NVLink domain, and the switch-to-switch cables a fabric-wide source (ibnetdiscover, UFM) sees.
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

// keys are the label keys of the tiers a PodGroup can ask for, as `fabricmap get tiers` gives them for
// fabricmap's default label keys.
type keys struct{ leaf, spine, nvlink string }

// fabricLabels infers fabricmap's tree from fabricInput as the aggregator does (NVLink domains as accelerator
// domains), and returns the node labels the aggregator writes for it and the label key of each tier. It
// fails the test when the tree is not the fabric's shape (domains named after their switches), so that the
// cases' expectations, written in switch names, mean what they say.
func fabricLabels(t *testing.T) (map[string]map[string]string, keys) {
	t.Helper()
	in := fabricInput()
	tree, problems := topology.Build(in, topology.BuildOptions{RootName: topology.TierNameRoot, AcceleratorDomains: true})
	if len(problems) > 0 {
		t.Fatalf("inferring the test fabric: %v", problems)
	}
	tiers, err := hypernodegen.Tiers(tree, hypernodegen.DefaultLabelKeys())
	if err != nil {
		t.Fatalf("the tiers of the test fabric: %v", err)
	}
	k := keys{leaf: tierKey(t, tiers, topology.TierNameLeaf), spine: tierKey(t, tiers, topology.TierNameSpine),
		nvlink: tierKey(t, tiers, topology.TierNameAccelerator)}
	labels := hypernodegen.DesiredNodeLabels(tree, in.Nodes, hypernodegen.DefaultLabelKeys())
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			n := nodeName(l, i)
			if got := labels[n]; got[k.leaf] != l.name || got[k.spine] != l.spine {
				t.Fatalf("node %s is labelled %v; want %s=%s and %s=%s (the tree's domains: %v)", n, got, k.leaf, l.name, k.spine, l.spine,
					slices.Sorted(maps.Keys(tree.Domains)))
			}
		}
	}
	return labels, k
}

// tierKey is the node-label key of the tier named name; it fails the test when the tree has no such tier or
// fabricmap writes no label for it.
func tierKey(t *testing.T, tiers []hypernodegen.Tier, name string) string {
	t.Helper()
	for _, tr := range tiers {
		if slices.Contains(strings.Split(tr.Name, "/"), name) && tr.LabelKey != "" {
			return tr.LabelKey
		}
	}
	t.Fatalf("no labelled %s tier among %+v", name, tiers)
	return ""
}

// nvlinkValue is the value of the NVLink domain key on the nodes of NVLink domain id.
func nvlinkValue(id string) string { return hypernodegen.LabelValue(topology.CanonicalNVLinkID(id)) }

// createNodes creates every node of fabric, labelled with labels and its pool, Ready, untainted and with the
// capacity of an 8-GPU node.
func createNodes(t *testing.T, ctx context.Context, labels map[string]map[string]string) {
	t.Helper()
	c := testenv.Shared.Client
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		gpuResource:           resource.MustParse("8"),
	}
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			name := nodeName(l, i)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname: name,
				poolLabel:            l.pool,
			}}}
			maps.Copy(n.Labels, labels[name])
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
			// controller of kube-controller-manager (not running here) would lift it once the node is Ready.
			n.Spec.Taints = nil
			if err := c.Update(ctx, n); err != nil {
				t.Fatalf("removing the not-ready taint of Node %s: %v", name, err)
			}
		}
	}
}
