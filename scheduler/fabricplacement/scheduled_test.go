package fabricplacement

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// scheduledHandle is a framework handle whose snapshot knows only the scheduled pods of PodGroups (by name);
// any other call panics (the embedded interfaces are nil).
type scheduledHandle struct {
	fwk.Handle
	fwk.SharedLister
	scheduled map[string][]*corev1.Pod
}

func (h *scheduledHandle) SnapshotSharedLister() fwk.SharedLister  { return h }
func (h *scheduledHandle) PodGroupStates() fwk.PodGroupStateLister { return h }
func (h *scheduledHandle) Get(_, name string) (fwk.PodGroupState, error) {
	return podGroupState{scheduled: h.scheduled[name]}, nil
}

// podGroupState is the state of a PodGroup with scheduled pods.
type podGroupState struct {
	fwk.PodGroupState
	scheduled []*corev1.Pod
}

func (s podGroupState) ScheduledPods() []*corev1.Pod { return s.scheduled }

// TestScheduledPods places the rest of a gang beside its pods already scheduled: within the domain of its
// highest allowed tier that holds them, or refused when they already span more than it allows.
func TestScheduledPods(t *testing.T) {
	on := func(nodes ...string) []*corev1.Pod {
		var out []*corev1.Pod
		for i, n := range nodes {
			p := gpuPod("done", i)
			p.Spec.NodeName = n
			out = append(out, p)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		scheduled  []*corev1.Pod
		key        string
		pods       int
		wantPlan   string
		wantReason string
	}{
		{name: "the rest in the leaf of the scheduled pod", scheduled: on("leaf-2-node-1"), key: keys.Tiers[0], pods: 2,
			wantPlan: "fabricmap-plan:leaf-2 [leaf-2-node-2 leaf-2-node-3]"},
		{name: "the spine of the scheduled pods is full", scheduled: on("leaf-3-node-1", "leaf-3-node-2"), key: keys.Tiers[1], pods: 2,
			wantReason: "fabricmap: no domain up to tier 2 (spine) has room for 2 pods"}, // alone, leaf-1 would hold them
		{name: "no limit: anywhere", scheduled: on("leaf-3-node-1"), pods: 3,
			wantPlan: "fabricmap-plan:leaf-1 [leaf-1-node-1 leaf-1-node-3 leaf-1-node-4]"},
		{name: "no room left in the leaf of the scheduled pods", scheduled: on("leaf-3-node-1"), key: keys.Tiers[0], pods: 3,
			wantReason: "fabricmap: no domain up to tier 1 (leaf) has room for 3 pods"},
		{name: "scheduled across spines, limit a spine", scheduled: on("leaf-1-node-1", "leaf-3-node-1"), key: keys.Tiers[1], pods: 1,
			wantReason: "above its limit of tier 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pg := &schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}
			if tc.key != "" {
				pg.Spec.SchedulingConstraints = &schedulingv1alpha2.PodGroupSchedulingConstraints{Topology: []schedulingv1alpha2.TopologyConstraint{{Key: tc.key}}}
			}
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if err := indexer.Add(pg); err != nil {
				t.Fatal(err)
			}
			pl := &Plugin{podGroups: schedulinglisters.NewPodGroupLister(indexer), handle: &scheduledHandle{scheduled: map[string][]*corev1.Pod{"g": tc.scheduled}}}
			var infos []fwk.NodeInfo
			for _, n := range fabricNodes() {
				var running []*corev1.Pod
				for _, p := range tc.scheduled {
					if p.Spec.NodeName == n.Name {
						running = append(running, p)
					}
				}
				ni := framework.NewNodeInfo(running...)
				ni.SetNode(n)
				infos = append(infos, ni)
			}
			var pods []*corev1.Pod
			for i := range tc.pods {
				pods = append(pods, gpuPod("g", i))
			}
			res, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: infos})
			if tc.wantReason != "" {
				if st.IsSuccess() || !strings.Contains(st.Message(), tc.wantReason) {
					t.Fatalf("status %v %q; want one with %q", st.Code(), st.Message(), tc.wantReason)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("status %v: %s", st.Code(), st.Message())
			}
			var names []string
			for _, ni := range res.Placements[0].Nodes {
				names = append(names, ni.Node().Name)
			}
			if diff := cmp.Diff(tc.wantPlan, fmt.Sprintf("%s %v", res.Placements[0].Name, names)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
