package koordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Koordinator's gang annotations (github.com/koordinator-sh/koordinator/apis/extension, v1.7.0).
const (
	gangNameAnnotation     = "gang.scheduling.koordinator.sh/name"
	gangMinAnnotation      = "gang.scheduling.koordinator.sh/min-available"
	gangTopologyAnnotation = "gang.scheduling.koordinator.sh/network-topology-spec"
)

// nodeCPU is every node's CPU; every gang pod asks for all of it, so a node holds one pod.
const nodeCPU = "8"

// namespace holds the gangs' pods.
const namespace = "koord-gangs"

// domain is one domain of the test fabric: its tier, parent and the nodes directly below it.
type domain struct {
	name, tierName, parent string
	tier                   int
	nodes                  int
}

// fabric is a three-tier fabric: spine-1 has room for 3 one-node pods (leaves of 2 and 1 nodes), spine-2 for 4
// (two leaves of 2), 7 in all.
var fabric = []domain{
	{name: "fabric", tier: 3, tierName: topology.TierNameRoot},
	{name: "spine-1", tier: 2, tierName: topology.TierNameSpine, parent: "fabric"},
	{name: "spine-2", tier: 2, tierName: topology.TierNameSpine, parent: "fabric"},
	{name: "leaf-1a", tier: 1, tierName: topology.TierNameLeaf, parent: "spine-1", nodes: 2},
	{name: "leaf-1b", tier: 1, tierName: topology.TierNameLeaf, parent: "spine-1", nodes: 1},
	{name: "leaf-2a", tier: 1, tierName: topology.TierNameLeaf, parent: "spine-2", nodes: 2},
	{name: "leaf-2b", tier: 1, tierName: topology.TierNameLeaf, parent: "spine-2", nodes: 2},
}

// fabricTree builds fabric as the aggregator's tree: nodes are named after their leaf.
func fabricTree(t *testing.T) *topology.Tree {
	t.Helper()
	tree := topology.NewTree()
	for _, d := range fabric {
		dom := &topology.Domain{Name: d.name, Tier: d.tier, TierName: d.tierName, Parent: d.parent}
		for i := 1; i <= d.nodes; i++ {
			dom.Nodes = append(dom.Nodes, fmt.Sprintf("%s-node-%d", d.name, i))
		}
		if err := tree.Add(dom); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range fabric {
		if d.parent != "" {
			p := tree.Domains[d.parent]
			p.Children = append(p.Children, d.name)
			slices.Sort(p.Children)
		}
	}
	if err := tree.Validate(); err != nil {
		t.Fatalf("test fabric is invalid: %v", err)
	}
	return tree
}

// keys are the node-label keys the aggregator writes by default (topograph v1's).
func keys(t *testing.T) hypernodegen.LabelKeys {
	t.Helper()
	k, err := hypernodegen.StyleKeys(wellknown.LabelStyleTopographV1)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// spineLayer and blockLayer are the Koordinator layers fabricmap names for switch tiers 2 and 1.
var (
	spineLayer = hypernodegen.DefaultLayerNames().Tiers[1]
	blockLayer = hypernodegen.DefaultLayerNames().Tiers[0]
)

// createFabric creates every node of tree, Ready with CPU capacity and labelled as the aggregator labels it,
// and the ClusterNetworkTopology the aggregator writes for tree.
func createFabric(t *testing.T, ctx context.Context, tree *topology.Tree) {
	t.Helper()
	c := testenv.Shared.Client
	labels := hypernodegen.NodeLabels(tree, nil, keys(t))
	for _, name := range slices.Sorted(mapKeys(labels)) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels[name]}}
		n.Labels[corev1.LabelHostname] = name
		if err := c.Create(ctx, n); err != nil {
			t.Fatalf("creating Node %s: %v", name, err)
		}
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(nodeCPU),
			corev1.ResourceMemory: resource.MustParse("32Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
		n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatalf("setting Node %s Ready with capacity: %v", name, err)
		}
		// The API server's TaintNodesByCondition admission taints a new node not-ready; the node lifecycle
		// controller (not running here) would lift it once the node is Ready.
		n.Spec.Taints = nil
		if err := c.Update(ctx, n); err != nil {
			t.Fatalf("untainting Node %s: %v", name, err)
		}
	}
	cnt, err := hypernodegen.ClusterNetworkTopology(keys(t), tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cnt); err != nil {
		t.Fatalf("creating ClusterNetworkTopology %s: %v", cnt.GetName(), err)
	}
}

// mapKeys iterates over m's keys.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// layerDomain is one entry of the status koord-scheduler writes on the ClusterNetworkTopology: a domain of
// its tree, the domain above it, its child domains and how many nodes it holds.
type layerDomain struct {
	Layer, Name, Parent string
	Children            []string
	Nodes               int32
}

// wantStatus is the tree koord-scheduler must read from fabricmap's layers and node labels: every switch
// domain of fabric below its parent, with its nodes counted.
func wantStatus() []layerDomain {
	layers := map[string]string{topology.TierNameRoot: hypernodegen.DefaultLayerNames().Tiers[2],
		topology.TierNameSpine: spineLayer, topology.TierNameLeaf: blockLayer}
	nodes := map[string]int32{}
	children := map[string][]string{}
	for _, d := range slices.Backward(fabric) {
		nodes[d.name] += int32(d.nodes)
		if d.parent != "" {
			nodes[d.parent] += nodes[d.name]
			children[d.parent] = append(children[d.parent], d.name)
		}
	}
	var want []layerDomain
	for _, d := range fabric {
		ch := children[d.name]
		slices.Sort(ch)
		want = append(want, layerDomain{Layer: layers[d.tierName], Name: d.name, Parent: d.parent, Children: ch, Nodes: nodes[d.name]})
	}
	return want
}

// readStatus returns the domains of the ClusterNetworkTopology's status below Koordinator's cluster layer,
// ordered as fabric is.
func readStatus(ctx context.Context) ([]layerDomain, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(hypernodegen.ClusterNetworkTopologyGVK)
	if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: hypernodegen.ClusterNetworkTopologyName}, u); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(u.Object["status"])
	if err != nil {
		return nil, err
	}
	var status struct {
		DetailStatus []struct {
			TopologyInfo       struct{ TopologyLayer, TopologyName string }
			ParentTopologyInfo *struct{ TopologyLayer, TopologyName string }
			ChildTopologyNames []string
			NodeNum            int32
		}
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return nil, fmt.Errorf("decoding the status %s: %w", raw, err)
	}
	var got []layerDomain
	for _, s := range status.DetailStatus {
		if s.TopologyInfo.TopologyLayer == hypernodegen.KoordinatorClusterLayer {
			continue
		}
		d := layerDomain{Layer: s.TopologyInfo.TopologyLayer, Name: s.TopologyInfo.TopologyName, Children: s.ChildTopologyNames, Nodes: s.NodeNum}
		if p := s.ParentTopologyInfo; p != nil && p.TopologyLayer != hypernodegen.KoordinatorClusterLayer {
			d.Parent = p.TopologyName
		}
		got = append(got, d)
	}
	order := map[string]int{}
	for i, d := range fabric {
		order[d.name] = i
	}
	slices.SortFunc(got, func(a, b layerDomain) int { return order[a.Name] - order[b.Name] })
	return got, nil
}

// gangPods returns n pods of the gang name for koord-scheduler, all of which must be placed together inside
// one domain of mustGather (Koordinator's MustGather strategy), each asking for a whole node.
func gangPods(name string, n int, mustGather string) []*corev1.Pod {
	spec := fmt.Sprintf(`{"gatherStrategy":[{"layer":%q,"strategy":"MustGather"}]}`, mustGather)
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: namespace, Annotations: map[string]string{
				gangNameAnnotation: name, gangMinAnnotation: strconv.Itoa(n), gangTopologyAnnotation: spec,
			}},
			Spec: corev1.PodSpec{
				SchedulerName: schedulerName,
				Containers: []corev1.Container{{Name: "work", Image: "registry.invalid/work", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(nodeCPU)},
				}}},
			},
		})
	}
	return pods
}

// TestGangMustGatherInOneSpine runs koord-scheduler on fabricmap's ClusterNetworkTopology and node labels:
// koord-scheduler reads them into fabricmap's tree, places a gang that must gather in one spine inside the one
// spine with room for it, and leaves one larger than any spine pending though the cluster has room for it.
func TestGangMustGatherInOneSpine(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	installKoordCRDs(t)
	tree := fabricTree(t)
	createFabric(t, ctx, tree)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	startKoordScheduler(t)

	want := wantStatus()
	testenv.Eventually(t, time.Minute, "koord-scheduler's network-topology tree in the ClusterNetworkTopology's status", func() (bool, string) {
		got, err := readStatus(ctx)
		if err != nil {
			return false, err.Error()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return false, "status (-want +got):\n" + diff
		}
		return true, ""
	})

	spineKey := keys(t).Tiers[1]
	cases := []struct {
		name string
		pods int
		// wantSpine is the spine every pod must be bound in; empty when the gang must stay pending.
		wantSpine string
	}{
		// 5 pods fit in the cluster (7 nodes free) but in no spine (3 and 4): none may be bound.
		{name: "larger-than-any-spine", pods: 5},
		// 4 pods fit only in spine-2; anywhere else they would cross spines.
		{name: "fits-one-spine", pods: 4, wantSpine: "spine-2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods := gangPods(tc.name, tc.pods, spineLayer)
			for _, p := range pods {
				if err := env.Client.Create(ctx, p); err != nil {
					t.Fatalf("creating pod %s: %v", p.Name, err)
				}
			}
			if tc.wantSpine == "" {
				waitUnschedulable(t, ctx, pods)
			} else {
				got := waitBoundSpines(t, ctx, pods, spineKey)
				if diff := cmp.Diff([]string{tc.wantSpine}, got); diff != "" {
					t.Errorf("spines of the gang's nodes (-want +got):\n%s", diff)
				}
			}
			for _, p := range pods {
				if err := env.Client.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
					t.Errorf("deleting pod %s: %v", p.Name, err)
				}
			}
		})
	}
}

// noTopologyRoom is the start of the reason koord-scheduler gives when no domain of the must-gather layer has
// room for the whole gang (pkg/scheduler/plugins/coscheduling/core, v1.7.0).
const noTopologyRoom = "no candidate topology nodes can accommodate job"

// waitUnschedulable waits until koord-scheduler has marked every pod unschedulable because no domain of the
// must-gather layer has room for the gang, and fails if any is bound.
func waitUnschedulable(t *testing.T, ctx context.Context, pods []*corev1.Pod) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, "every pod of the gang marked unschedulable", func() (bool, string) {
		for _, p := range pods {
			var got corev1.Pod
			if err := testenv.Shared.Client.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
				return false, err.Error()
			}
			if got.Spec.NodeName != "" {
				t.Fatalf("pod %s was bound to %s: the gang fits in no spine", p.Name, got.Spec.NodeName)
			}
			if !unschedulable(&got, noTopologyRoom) {
				return false, fmt.Sprintf("pod %s has conditions %v", p.Name, got.Status.Conditions)
			}
		}
		return true, ""
	})
}

// unschedulable reports whether p's PodScheduled condition is false for being unschedulable, with a message
// that names why.
func unschedulable(p *corev1.Pod, why string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
			strings.Contains(c.Message, why) {
			return true
		}
	}
	return false
}

// waitBoundSpines waits until every pod is bound and returns the spines (node label spineKey) of their nodes.
func waitBoundSpines(t *testing.T, ctx context.Context, pods []*corev1.Pod, spineKey string) []string {
	t.Helper()
	nodes := map[string]string{}
	testenv.Eventually(t, 2*time.Minute, "every pod of the gang bound", func() (bool, string) {
		for _, p := range pods {
			var got corev1.Pod
			if err := testenv.Shared.Client.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
				return false, err.Error()
			}
			if got.Spec.NodeName == "" {
				return false, fmt.Sprintf("pod %s is not bound; conditions %v", p.Name, got.Status.Conditions)
			}
			nodes[p.Name] = got.Spec.NodeName
		}
		return true, ""
	})
	var spines []string
	for pod, name := range nodes {
		var n corev1.Node
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			t.Fatalf("reading node %s of pod %s: %v", name, pod, err)
		}
		if s := n.Labels[spineKey]; !slices.Contains(spines, s) {
			spines = append(spines, s)
		}
	}
	slices.Sort(spines)
	return spines
}
