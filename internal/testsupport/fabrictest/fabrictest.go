// Package fabrictest describes small leaf-and-spine test fabrics and turns one into what fabricmap makes of it:
// the evidence the aggregator merges, the tree, the node labels it writes and the label key of each tier, and
// Nodes labelled so on a test API server. The tests of the schedulers that read fabricmap's labels (the stock
// kube-scheduler's Workload API, fabricmap-scheduler) share it. It imports no client-go beyond the
// controller-runtime client it is given, so that the scheduler's module, on another Kubernetes version,
// compiles it too.
package fabrictest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// PoolLabel puts a node in the pool of one test case; each case's pods select their pool, so the cases share
// fabricmap's tree and label keys but not nodes.
const PoolLabel = "fabricmap.test/pool"

// GPUResource is the extended resource of NVIDIA's device plugin; each node has 8.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// CoreSwitch is the switch every spine is cabled to: the root of the tree.
const CoreSwitch = "core"

// Leaf is one leaf switch of a test fabric: the spine above it and the nodes below it.
type Leaf struct {
	Pool, Spine, Name string
	Nodes             int
	// Sick are the nodes (from 1) whose compute link fabric health judged degraded.
	Sick []int
	// NVLink gives the NVLink domain of each node below the leaf, in order; empty: none has one.
	NVLink []string
}

// NodeName names the i-th node (from 1) below l.
func NodeName(l Leaf, i int) string { return fmt.Sprintf("%s-node-%d", l.Name, i) }

// Input is the evidence the aggregator would merge for fabric: each node's report of its one leaf link and
// NVLink domain, and the switch-to-switch cables a fabric-wide source (ibnetdiscover, UFM) sees.
func Input(fabric []Leaf) topology.Input {
	var in topology.Input
	spines := map[string]bool{}
	for _, l := range fabric {
		for i := 1; i <= l.Nodes; i++ {
			e := topology.NodeEvidence{Node: NodeName(l, i), Source: "reports", SelfReported: true,
				Links: []topology.SwitchLink{{SwitchID: topology.SwitchID("local", l.Name), SwitchName: l.Name, Port: fmt.Sprint(i)}}}
			if len(l.NVLink) > 0 {
				e.NVLinkDomain = l.NVLink[i-1]
			}
			in.Nodes = append(in.Nodes, e)
		}
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: topology.SwitchID("local", l.Name), AName: l.Name,
			B: topology.SwitchID("local", l.Spine), BName: l.Spine, Source: "ibnetdiscover"})
		spines[l.Spine] = true
	}
	for _, s := range slices.Sorted(maps.Keys(spines)) {
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: topology.SwitchID("local", s), AName: s,
			B: topology.SwitchID("local", CoreSwitch), BName: CoreSwitch, Source: "ibnetdiscover"})
	}
	return in
}

// Keys are the label keys of the tiers a PodGroup can ask for, as `fabricmap get tiers` gives them for
// fabricmap's default label keys.
type Keys struct{ Leaf, Spine, NVLink string }

// Labels infers fabricmap's tree from Input(fabric) as the aggregator does (NVLink domains as accelerator
// domains), and returns the node labels the aggregator writes for it and the label key of each tier. It
// fails the test when the tree is not the fabric's shape (domains named after their switches), so that the
// cases' expectations, written in switch names, mean what they say.
func Labels(t testing.TB, fabric []Leaf) (map[string]map[string]string, Keys) {
	t.Helper()
	in := Input(fabric)
	tree, problems := topology.Build(in, topology.BuildOptions{RootName: topology.TierNameRoot, AcceleratorDomains: true})
	if len(problems) > 0 {
		t.Fatalf("inferring the test fabric: %v", problems)
	}
	tiers, err := hypernodegen.Tiers(tree, hypernodegen.DefaultLabelKeys())
	if err != nil {
		t.Fatalf("the tiers of the test fabric: %v", err)
	}
	k := Keys{Leaf: tierKey(t, tiers, topology.TierNameLeaf), Spine: tierKey(t, tiers, topology.TierNameSpine),
		NVLink: tierKey(t, tiers, topology.TierNameAccelerator)}
	labels := hypernodegen.DesiredNodeLabels(tree, in.Nodes, hypernodegen.DefaultLabelKeys())
	for _, l := range fabric {
		for i := 1; i <= l.Nodes; i++ {
			n := NodeName(l, i)
			if got := labels[n]; got[k.Leaf] != l.Name || got[k.Spine] != l.Spine {
				t.Fatalf("node %s is labelled %v; want %s=%s and %s=%s (the tree's domains: %v)", n, got, k.Leaf, l.Name, k.Spine, l.Spine,
					slices.Sorted(maps.Keys(tree.Domains)))
			}
		}
	}
	return labels, k
}

// tierKey is the node-label key of the tier named name; it fails the test when the tree has no such tier or
// fabricmap writes no label for it.
func tierKey(t testing.TB, tiers []hypernodegen.Tier, name string) string {
	t.Helper()
	for _, tr := range tiers {
		if slices.Contains(strings.Split(tr.Name, "/"), name) && tr.LabelKey != "" {
			return tr.LabelKey
		}
	}
	t.Fatalf("no labelled %s tier among %+v", name, tiers)
	return ""
}

// NVLinkValue is the value of the NVLink domain key on the nodes of NVLink domain id.
func NVLinkValue(id string) string { return hypernodegen.LabelValue(topology.CanonicalNVLinkID(id)) }

// CreateNodes creates every node of fabric through c, labelled with labels, its pool and (for a sick one) the
// link-health label the aggregator writes, Ready, untainted and with the capacity of an 8-GPU node.
func CreateNodes(t testing.TB, ctx context.Context, c client.Client, fabric []Leaf, labels map[string]map[string]string) {
	t.Helper()
	for _, l := range fabric {
		for i := 1; i <= l.Nodes; i++ {
			name := NodeName(l, i)
			nl := map[string]string{PoolLabel: l.Pool}
			maps.Copy(nl, labels[name])
			if slices.Contains(l.Sick, i) {
				nl[wellknown.LinkHealthLabel] = wellknown.LinkHealthDegraded
			}
			CreateNode(t, ctx, c, name, nl)
		}
	}
}

// CreateNode creates the Node name through c with labels (and its hostname), Ready, untainted and with the
// capacity of an 8-GPU node.
func CreateNode(t testing.TB, ctx context.Context, c client.Client, name string, labels map[string]string) {
	t.Helper()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		GPUResource:           resource.MustParse("8"),
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
	// controller of kube-controller-manager (not running here) would lift it once the node is Ready.
	n.Spec.Taints = nil
	if err := c.Update(ctx, n); err != nil {
		t.Fatalf("removing the not-ready taint of Node %s: %v", name, err)
	}
}

// DeleteGang removes a gang's pods and then its PodGroup pg (typed or unstructured) through c, lifting the
// PodGroup's protection finalizer that no kube-controller-manager lifts here, and fails the test unless all of
// them are gone within 30 s.
func DeleteGang(t testing.TB, c client.Client, pg client.Object, pods []*corev1.Pod) {
	t.Helper()
	ctx := context.Background() // the test's context is done by now
	for _, p := range pods {
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	if err := c.Delete(ctx, pg); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting PodGroup %s/%s: %v", pg.GetNamespace(), pg.GetName(), err)
	}
	unfinalize := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("PodGroup %s/%s and its pods gone", pg.GetNamespace(), pg.GetName()), func() (bool, string) {
		for _, p := range pods {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Pod %s: %v", p.Name, err)
			}
		}
		cur := pg.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(pg), cur)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		if len(cur.GetFinalizers()) > 0 {
			if err := c.Patch(ctx, cur, unfinalize); err != nil && !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("removing finalizers %v: %v", cur.GetFinalizers(), err)
			}
		}
		return false, fmt.Sprintf("still there with finalizers %v", cur.GetFinalizers())
	})
}
