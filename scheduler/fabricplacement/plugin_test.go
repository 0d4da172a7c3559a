package fabricplacement

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/wellknown"
)

// keys are fabricmap's default label keys (topograph v1), as the aggregator writes them.
var keys = hypernodegen.DefaultLabelKeys()

// testNode is a node of leaf under spine with 8 GPUs; extra labels are added.
func testNode(name, leaf, spine string, extra map[string]string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8"),
	}
	labels := map[string]string{keys.Tiers[0]: leaf, keys.Tiers[1]: spine}
	maps.Copy(labels, extra)
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity}}
}

// gpuPod is a pod of the PodGroup group asking for a whole 8-GPU node.
func gpuPod(group string, i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("%s-%d", group, i), UID: types.UID(fmt.Sprintf("uid-%s-%d", group, i))},
		Spec: corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &group}, Containers: []corev1.Container{{
			Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}},
		}}}}
}

// podGroupInfo is the framework's view of a PodGroup in a cycle: its unscheduled pods.
type podGroupInfo struct {
	name string
	pods []*corev1.Pod
}

func (p podGroupInfo) GetUnscheduledPods() []*corev1.Pod { return p.pods }
func (p podGroupInfo) GetName() string                   { return p.name }
func (p podGroupInfo) GetNamespace() string              { return "ns" }

// fabricNodes is a small fabric: spine-1 holds leaf-1 (4 nodes, leaf-1-node-2 with a degraded link) and leaf-2
// (3 nodes), spine-2 holds leaf-3 (3 nodes); no node carries an NVLink domain or a label of the tier above the
// spines, so the tree has tiers 1 and 2 below placement's cluster domain.
func fabricNodes() []*corev1.Node {
	var out []*corev1.Node
	for _, l := range []struct {
		leaf, spine string
		n           int
	}{{"leaf-1", "spine-1", 4}, {"leaf-2", "spine-1", 3}, {"leaf-3", "spine-2", 3}} {
		for i := 1; i <= l.n; i++ {
			extra := map[string]string{}
			if l.leaf == "leaf-1" && i == 2 {
				extra[wellknown.LinkHealthLabel] = wellknown.LinkHealthDegraded
			}
			out = append(out, testNode(fmt.Sprintf("%s-node-%d", l.leaf, i), l.leaf, l.spine, extra))
		}
	}
	return out
}

// TestGeneratePlacements runs GeneratePlacements on fabricNodes with a PodGroup lister of one PodGroup, and
// compares the placements' names and nodes, or the status of one that cannot be placed.
func TestGeneratePlacements(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nodes       []*corev1.Node
		pods        int
		labels      map[string]string
		annotations map[string]string
		key         string
		gated       bool // the pods carry the placer's gate
		// want maps each placement's name to its nodes, the plan first.
		want       []string
		wantCode   fwk.Code
		wantReason string
	}{
		{name: "three: the healthy nodes of the first of the tightest leaves", nodes: fabricNodes(), pods: 3,
			want: []string{
				"fabricmap-plan:leaf-1 [leaf-1-node-1 leaf-1-node-3 leaf-1-node-4]",
				"leaf-1 [leaf-1-node-1 leaf-1-node-2 leaf-1-node-3 leaf-1-node-4]",
				"leaf-2 [leaf-2-node-1 leaf-2-node-2 leaf-2-node-3]",
				"leaf-3 [leaf-3-node-1 leaf-3-node-2 leaf-3-node-3]",
				"spine-2 [leaf-3-node-1 leaf-3-node-2 leaf-3-node-3]",
				"spine-1 [leaf-1-node-1 leaf-1-node-2 leaf-1-node-3 leaf-1-node-4 leaf-2-node-1 leaf-2-node-2 leaf-2-node-3]",
				"cluster [leaf-1-node-1 leaf-1-node-2 leaf-1-node-3 leaf-1-node-4 leaf-2-node-1 leaf-2-node-2 leaf-2-node-3 leaf-3-node-1 leaf-3-node-2 leaf-3-node-3]",
			}},
		{name: "DP 2 x PP 2 under one spine, each pipeline group in one leaf", nodes: fabricNodes(), pods: 4,
			labels: map[string]string{wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, key: keys.Tiers[1],
			want: []string{
				"fabricmap-plan:spine-1 [leaf-1-node-1 leaf-1-node-3 leaf-2-node-1 leaf-2-node-2]",
				"spine-1 [leaf-1-node-1 leaf-1-node-2 leaf-1-node-3 leaf-1-node-4 leaf-2-node-1 leaf-2-node-2 leaf-2-node-3]",
			}},
		{name: "leaf key: four fit no healthy leaf", nodes: fabricNodes(), pods: 4, key: keys.Tiers[0],
			wantCode: fwk.Unschedulable, wantReason: "fabricmap: no domain up to tier 1 (leaf) has room for 4 pods"},
		{name: "a key that is no fabricmap tier", nodes: fabricNodes(), pods: 2, key: "topology.kubernetes.io/zone",
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: `key "topology.kubernetes.io/zone" is none of fabricmap's topology label keys`},
		{name: "a tier name that does not exist", nodes: fabricNodes(), pods: 2, annotations: map[string]string{HighestTierAnnotation: "galaxy"},
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "galaxy"},
		{name: "a tier number that does not exist", nodes: fabricNodes(), pods: 2, annotations: map[string]string{HighestTierAnnotation: "7"},
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "the tree has no tier 7 (tiers [1 2])"},
		{name: "a bad PP degree", nodes: fabricNodes(), pods: 2, labels: map[string]string{wellknown.PPLabel: "two"},
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: `PodGroup label fabricmap.io/pp="two"`},
		{name: "larger than the cluster", nodes: fabricNodes(), pods: 11,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "do not fit even in the empty cluster"},
		{name: "pods held by the placer's gate", nodes: fabricNodes(), pods: 2, gated: true,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "is held by fabricmap-placer"},
		{name: "no topology labels", nodes: []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}}, pods: 1,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "no node carries fabricmap's topology labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pg := &schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", Labels: tc.labels, Annotations: tc.annotations}}
			if tc.key != "" {
				pg.Spec.SchedulingConstraints = &schedulingv1alpha2.PodGroupSchedulingConstraints{Topology: []schedulingv1alpha2.TopologyConstraint{{Key: tc.key}}}
			}
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if err := indexer.Add(pg); err != nil {
				t.Fatal(err)
			}
			pl := &Plugin{podGroups: schedulinglisters.NewPodGroupLister(indexer)}
			var pods []*corev1.Pod
			for i := range tc.pods {
				p := gpuPod("g", i)
				if tc.gated {
					p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: wellknown.Gate}}
				}
				pods = append(pods, p)
			}
			var infos []fwk.NodeInfo
			for _, n := range tc.nodes {
				ni := framework.NewNodeInfo()
				ni.SetNode(n)
				infos = append(infos, ni)
			}
			state := framework.NewCycleState()
			res, st := pl.GeneratePlacements(context.Background(), state, podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: infos})
			if tc.wantCode != fwk.Success {
				if st.Code() != tc.wantCode || !strings.Contains(st.Message(), tc.wantReason) {
					t.Fatalf("status %v %q; want %v with %q", st.Code(), st.Message(), tc.wantCode, tc.wantReason)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("status %v: %s", st.Code(), st.Message())
			}
			var got []string
			for _, p := range res.Placements {
				var names []string
				for _, ni := range p.Nodes {
					names = append(names, ni.Node().Name)
				}
				got = append(got, fmt.Sprintf("%s %v", p.Name, names))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
		})
	}
}

// assignment proposes a pod for a node.
type assignment struct{ node string }

func (a assignment) GetPod() *corev1.Pod { return nil }
func (a assignment) GetNodeName() string { return a.node }

// TestScorePlacement scores placements of a gang of 3 after GeneratePlacements planned it in leaf-1: the plan
// scores the most, the same tier in another leaf less, across leaves of a spine less again, and a placement
// of another generator (no plan in the cycle) the least.
func TestScorePlacement(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(&schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}); err != nil {
		t.Fatal(err)
	}
	pl := &Plugin{podGroups: schedulinglisters.NewPodGroupLister(indexer)}
	var infos []fwk.NodeInfo
	for _, n := range fabricNodes() {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		infos = append(infos, ni)
	}
	pg := podGroupInfo{name: "g", pods: []*corev1.Pod{gpuPod("g", 0), gpuPod("g", 1), gpuPod("g", 2)}}
	state := framework.NewCycleState()
	if _, st := pl.GeneratePlacements(context.Background(), state, pg, &fwk.Placement{Nodes: infos}); !st.IsSuccess() {
		t.Fatalf("GeneratePlacements: %v", st.Message())
	}
	score := func(st fwk.PodGroupCycleState, name string, nodes ...string) int64 {
		a := &fwk.PodGroupAssignments{Placement: &fwk.Placement{Name: name}}
		for _, n := range nodes {
			a.ProposedAssignments = append(a.ProposedAssignments, assignment{n})
		}
		s, status := pl.ScorePlacement(context.Background(), st, pg, a)
		if !status.IsSuccess() {
			t.Fatalf("ScorePlacement %s: %v", name, status.Message())
		}
		return s
	}
	got := []int64{
		score(state, planPrefix+"leaf-1", "leaf-1-node-1", "leaf-1-node-3", "leaf-1-node-4"),
		score(state, "leaf-3", "leaf-3-node-1", "leaf-3-node-2", "leaf-3-node-3"),
		score(state, "spine-1", "leaf-1-node-1", "leaf-2-node-1", "leaf-2-node-2"),
		score(framework.NewCycleState(), "zone-a", "leaf-1-node-1", "leaf-2-node-1", "leaf-2-node-2"),
	}
	falling := got[0] == fwk.MaxScore && got[len(got)-1] == fwk.MinScore
	for i := 1; i < len(got); i++ {
		falling = falling && got[i] < got[i-1]
	}
	if !falling {
		t.Errorf("scores %v: want strictly falling from %d to %d", got, fwk.MaxScore, fwk.MinScore)
	}
}
