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
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestCachedCycles runs PodGroup cycles one after another on one plugin, whose cache keeps the cluster between
// cycles, while the nodes change under it (a pod lands and leaves, a node is cordoned, tainted): each cycle
// chooses what a fresh plugin chooses on the same nodes, the plan follows each change, and a cycle with
// nothing changed reuses the cluster of the one before.
func TestCachedCycles(t *testing.T) {
	// Two spines of three leaves of four 8-GPU nodes; a gang of four whole nodes fits one leaf.
	byName := map[string]*framework.NodeInfo{}
	var infos []fwk.NodeInfo
	for s := range 2 {
		for l := range 3 {
			for n := range 4 {
				ni := framework.NewNodeInfo()
				ni.SetNode(testNode(fmt.Sprintf("s%d-l%d-n%d", s, l, n), fmt.Sprintf("s%d-l%d", s, l), fmt.Sprintf("s%d", s), nil))
				byName[ni.Node().Name] = ni
				infos = append(infos, ni)
			}
		}
	}
	busy := gpuPod("busy", 0)
	busy.Spec.NodeName = "s0-l0-n0"
	setNode := func(name string, change func(*corev1.Node)) {
		n := byName[name].Node().DeepCopy()
		change(n)
		byName[name].SetNode(n)
	}
	warm := cyclePlugin(t)
	for _, step := range []struct {
		name   string
		change func()
		plan   string // the plan's domain
		reused bool   // the cluster of the cycle before is reused
	}{
		{name: "first", change: func() {}, plan: "s0-l0"},
		{name: "nothing changed", change: func() {}, plan: "s0-l0", reused: true},
		{name: "a pod lands on s0-l0-n0", change: func() { byName["s0-l0-n0"].AddPod(busy) }, plan: "s0-l1"},
		{name: "it leaves", change: func() {
			if err := byName["s0-l0-n0"].RemovePod(klog.Background(), busy); err != nil {
				t.Fatal(err)
			}
		}, plan: "s0-l0"},
		{name: "s0-l0-n1 cordoned", change: func() { setNode("s0-l0-n1", func(n *corev1.Node) { n.Spec.Unschedulable = true }) }, plan: "s0-l1"},
		{name: "s0-l1-n2 tainted as well: the pods do not tolerate it", change: func() {
			setNode("s0-l1-n2", func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
			})
		}, plan: "s0-l2"},
		{name: "uncordoned", change: func() { setNode("s0-l0-n1", func(n *corev1.Node) { n.Spec.Unschedulable = false }) }, plan: "s0-l0"},
	} {
		step.change()
		before := warm.trees.base.cluster
		got := runCycle(t, warm, infos)
		if diff := cmp.Diff(runCycle(t, cyclePlugin(t), infos), got); diff != "" {
			t.Errorf("%s: placements (-fresh plugin +cached):\n%s", step.name, diff)
		}
		if want := planPrefix + step.plan + " "; len(got) == 0 || !strings.HasPrefix(got[0], want) {
			t.Errorf("%s: placements %v; want the plan in %s first", step.name, got, step.plan)
		}
		if reused := warm.trees.base.cluster == before; reused != step.reused {
			t.Errorf("%s: the cluster of the cycle before reused %v; want %v", step.name, reused, step.reused)
		}
	}
}

// cyclePlugin is a plugin knowing one PodGroup, ns/g.
func cyclePlugin(t *testing.T) *Plugin {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(&schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}); err != nil {
		t.Fatal(err)
	}
	return &Plugin{podGroups: schedulinglisters.NewPodGroupLister(indexer)}
}

// runCycle runs GeneratePlacements for four whole-node pods of ns/g on infos and returns each placement's name
// and nodes, the plan first.
func runCycle(t *testing.T, pl *Plugin, infos []fwk.NodeInfo) []string {
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, gpuPod("g", i))
	}
	res, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: infos})
	if !st.IsSuccess() {
		t.Fatalf("GeneratePlacements: %v %s", st.Code(), st.Message())
	}
	var out []string
	for _, p := range res.Placements {
		var names []string
		for _, ni := range p.Nodes {
			names = append(names, ni.Node().Name)
		}
		out = append(out, fmt.Sprintf("%s %v", p.Name, names))
	}
	return out
}
