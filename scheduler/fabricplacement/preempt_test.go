package fabricplacement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"
)

// held is a gang holding nodes in a preemption test: its priority and, per pod, its node.
type held struct {
	name  string
	prio  int32
	nodes []string
	// plain pods join no PodGroup; terminating ones are being deleted.
	plain, terminating bool
}

// heldPods are the pods of h, bound to its nodes.
func (h held) heldPods() []*corev1.Pod {
	var out []*corev1.Pod
	for i, n := range h.nodes {
		p := gpuPod(h.name, i)
		p.Spec.NodeName, p.Spec.Priority = n, ptr.To(h.prio)
		if h.plain {
			p.Spec.SchedulingGroup = nil
		}
		if h.terminating {
			p.DeletionTimestamp = ptr.To(metav1.Now())
		}
		out = append(out, p)
	}
	return out
}

// preemptFabric is three leaves of 3 nodes (leaf-1 and leaf-2 under spine-1, leaf-3 under spine-2) and a node
// "bare" outside the tree, with the pods of running on them.
func preemptFabric(running []held) []fwk.NodeInfo {
	var nodes []*corev1.Node
	for _, l := range []struct{ leaf, spine string }{{"leaf-1", "spine-1"}, {"leaf-2", "spine-1"}, {"leaf-3", "spine-2"}} {
		for i := 1; i <= 3; i++ {
			nodes = append(nodes, testNode(fmt.Sprintf("%s-node-%d", l.leaf, i), l.leaf, l.spine, nil))
		}
	}
	bare := testNode("bare", "", "", nil)
	bare.Labels = nil
	nodes = append(nodes, bare)
	var infos []fwk.NodeInfo
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		for _, h := range running {
			for _, p := range h.heldPods() {
				if p.Spec.NodeName == n.Name {
					ni.AddPod(p)
				}
			}
		}
		infos = append(infos, ni)
	}
	return infos
}

// preemptorPods are the n pods of the PodGroup "g" that preempts, with priority prio.
func preemptorPods(n int, prio int32) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range n {
		p := gpuPod("g", i)
		p.Spec.Priority = ptr.To(prio)
		pods = append(pods, p)
	}
	return pods
}

// leafGroupLister lists the PodGroup "ns/g" held to the leaf tier by its topology key, and the PodGroups of
// others.
func leafGroupLister(t *testing.T, others ...string) schedulinglisters.PodGroupLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pg := &schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: schedulingv1alpha2.PodGroupSpec{SchedulingConstraints: &schedulingv1alpha2.PodGroupSchedulingConstraints{
			Topology: []schedulingv1alpha2.TopologyConstraint{{Key: keys.Tiers[0]}}}}}
	for _, o := range append([]string{"g"}, others...) {
		if o != "g" {
			pg = &schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: o}}
		}
		if err := indexer.Add(pg); err != nil {
			t.Fatal(err)
		}
	}
	return schedulinglisters.NewPodGroupLister(indexer)
}

// TestPreemptPlacement runs GeneratePlacements for a gang of 3 held to one leaf on a cluster where no leaf
// has room, and compares the one placement it offers (named after the leaf whose victims leave) and the
// victims' pods, or the status when it may not or cannot preempt.
func TestPreemptPlacement(t *testing.T) {
	leaf := func(l string) []string { return []string{l + "-node-1", l + "-node-2", l + "-node-3"} }
	for _, tc := range []struct {
		name    string
		running []held
		prio    int32
		never   bool // the preemptor's pods have preemptionPolicy Never
		// want is the placement and the victims' pods; wantReason what an Unschedulable status says instead.
		want, wantPods string
		wantReason     string
	}{
		{name: "a lower-priority gang filling a leaf leaves whole, its pod outside the tree too", prio: 100,
			running: []held{{name: "a", prio: 10, nodes: append(leaf("leaf-1"), "bare")},
				{name: "b", prio: 10, nodes: leaf("leaf-2")[:2]}, {name: "c", prio: 10, nodes: leaf("leaf-2")[2:]},
				{name: "h", prio: 1000, nodes: leaf("leaf-3")}},
			want:     "fabricmap-preempt:leaf-1 [leaf-1-node-1 leaf-1-node-2 leaf-1-node-3]",
			wantPods: "ns/a-0 ns/a-1 ns/a-2 ns/a-3"},
		{name: "the fewest victim gangs, in a later leaf", prio: 100,
			running: []held{{name: "d", prio: 10, nodes: leaf("leaf-1")[:1]}, {name: "e", prio: 10, nodes: leaf("leaf-1")[1:]},
				{name: "b", prio: 10, nodes: leaf("leaf-2")[:2]}, {name: "c", prio: 10, nodes: leaf("leaf-2")[2:]},
				{name: "f", prio: 10, nodes: leaf("leaf-3")}},
			want:     "fabricmap-preempt:leaf-3 [leaf-3-node-1 leaf-3-node-2 leaf-3-node-3]",
			wantPods: "ns/f-0 ns/f-1 ns/f-2"},
		{name: "never a gang of equal priority", prio: 10,
			running: []held{{name: "a", prio: 10, nodes: leaf("leaf-1")}, {name: "b", prio: 10, nodes: leaf("leaf-2")},
				{name: "c", prio: 10, nodes: leaf("leaf-3")}},
			wantReason: "preemption cannot help: no running PodGroup has a priority lower than 10"},
		{name: "never a gang of higher priority", prio: 100,
			running: []held{{name: "a", prio: 1000, nodes: leaf("leaf-1")}, {name: "b", prio: 1000, nodes: leaf("leaf-2")},
				{name: "c", prio: 1000, nodes: leaf("leaf-3")}},
			wantReason: "preemption cannot help: no running PodGroup has a priority lower than 100"},
		{name: "never a gang of higher priority, though a lower one runs where it does not help", prio: 100,
			running: []held{{name: "a", prio: 1000, nodes: leaf("leaf-1")}, {name: "b", prio: 1000, nodes: leaf("leaf-2")[1:]},
				{name: "low", prio: 10, nodes: leaf("leaf-2")[:1]}, {name: "c", prio: 1000, nodes: leaf("leaf-3")}},
			wantReason: "preemption cannot help: evicting whole gangs of lower priority than 100 leaves no room"},
		{name: "no set of whole gangs frees a leaf: pods of no PodGroup stay", prio: 100,
			running: []held{{name: "a", prio: 10, nodes: leaf("leaf-1")[:2]}, {name: "p1", plain: true, nodes: leaf("leaf-1")[2:]},
				{name: "b", prio: 10, nodes: leaf("leaf-2")[1:]}, {name: "p2", plain: true, nodes: leaf("leaf-2")[:1]},
				{name: "p3", plain: true, nodes: leaf("leaf-3")}},
			wantReason: "preemption cannot help"},
		{name: "terminating pods are no victims", prio: 100,
			running: []held{{name: "a", prio: 10, terminating: true, nodes: leaf("leaf-1")},
				{name: "b", prio: 1000, nodes: leaf("leaf-2")}, {name: "c", prio: 1000, nodes: leaf("leaf-3")}},
			wantReason: "preemption cannot help"},
		{name: "preemptionPolicy Never", prio: 100, never: true,
			running:    []held{{name: "a", prio: 10, nodes: leaf("leaf-1")}, {name: "b", prio: 10, nodes: leaf("leaf-2")}, {name: "c", prio: 10, nodes: leaf("leaf-3")}},
			wantReason: "it may not preempt: pod ns/g-0 has preemptionPolicy Never"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &Plugin{podGroups: leafGroupLister(t)}
			pods := preemptorPods(3, tc.prio)
			if tc.never {
				pods[0].Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever)
			}
			state := framework.NewCycleState()
			res, st := pl.GeneratePlacements(context.Background(), state, podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: preemptFabric(tc.running)})
			if tc.wantReason != "" {
				if st.Code() != fwk.Unschedulable || !strings.Contains(st.Message(), tc.wantReason) {
					t.Fatalf("status %v %q; want Unschedulable with %q", st.Code(), st.Message(), tc.wantReason)
				}
				if _, err := state.Read(cycleKey); err == nil {
					t.Errorf("a gang that does not preempt left a plan in the cycle")
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("status %v: %s", st.Code(), st.Message())
			}
			got := placementNames(res.Placements)
			d := readCycle(t, state)
			var victims []string
			for _, p := range d.preempt.choice.pods {
				victims = append(victims, p.Namespace+"/"+p.Name)
			}
			if diff := cmp.Diff([]string{tc.want, tc.wantPods}, []string{got[0], strings.Join(victims, " ")}); diff != "" || len(got) != 1 {
				t.Errorf("placements %v, victims' pods (-want +got):\n%s", got, diff)
			}
		})
	}
}

// placementNames renders placements as "name [nodes]".
func placementNames(ps []*fwk.Placement) []string {
	var out []string
	for _, p := range ps {
		var names []string
		for _, ni := range p.Nodes {
			names = append(names, ni.Node().Name)
		}
		out = append(out, fmt.Sprintf("%s %v", p.Name, names))
	}
	return out
}

// readCycle returns the cycle's data GeneratePlacements left.
func readCycle(t *testing.T, state fwk.PodGroupCycleState) *cycleData {
	t.Helper()
	v, err := state.Read(cycleKey)
	if err != nil {
		t.Fatalf("no plan in the cycle: %v", err)
	}
	return v.(*cycleData)
}

// TestPreemptionPoints follows one preemption through the extension points: GeneratePlacements chooses gang a
// (leaf-1, and its pod on bare) for gang g of 3; PostFilter nominates each pod's planned node, unless that node
// refuses the pod for good; Permit evicts every pod of a, and nothing else, once all three pods passed and one
// at least was nominated, with the DisruptionTarget condition and Events naming g; the next cycle, a's pods
// still terminating, waits without choosing other victims.
func TestPreemptionPoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		// refuse makes the planned node of pod g-0 refuse it for good.
		refuse bool
		// wantNominated maps each pod to its nominated node ("" none); wantLeft the pods left after Permit.
		wantNominated map[string]string
		wantLeft      []string
		wantEvents    int
	}{
		{name: "whole gang evicted",
			wantNominated: map[string]string{"g-0": "leaf-1-node-1", "g-1": "leaf-1-node-2", "g-2": "leaf-1-node-3"},
			wantLeft:      []string{"b-0", "b-1", "b-2", "c-0", "c-1", "c-2"},
			// 4 victim pods, victim PodGroup a, the preemptor g.
			wantEvents: 6},
		{name: "a planned node refuses a pod for good: nobody is evicted", refuse: true,
			wantNominated: map[string]string{"g-0": "", "g-1": "leaf-1-node-2", "g-2": "leaf-1-node-3"},
			wantLeft:      []string{"a-0", "a-1", "a-2", "a-3", "b-0", "b-1", "b-2", "c-0", "c-1", "c-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaf := func(l string) []string { return []string{l + "-node-1", l + "-node-2", l + "-node-3"} }
			running := []held{{name: "a", prio: 10, nodes: append(leaf("leaf-1"), "bare")},
				{name: "b", prio: 1000, nodes: leaf("leaf-2")}, {name: "c", prio: 1000, nodes: leaf("leaf-3")}}
			var objs []*corev1.Pod
			for _, h := range running {
				objs = append(objs, h.heldPods()...)
			}
			client := fake.NewClientset()
			for _, p := range objs {
				if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			recorder := events.NewFakeRecorder(20)
			lister := leafGroupLister(t, "a", "b", "c")
			pl := &Plugin{podGroups: lister, evict: &evictor{client: client, events: recorder, podGroups: lister}}
			pods := preemptorPods(3, 100)
			pgState := framework.NewCycleState()
			nodes := preemptFabric(running)
			if _, st := pl.GeneratePlacements(context.Background(), pgState, podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: nodes}); !st.IsSuccess() {
				t.Fatalf("GeneratePlacements: %v %s", st.Code(), st.Message())
			}
			nominated := map[string]string{}
			for i, p := range pods {
				state := framework.NewCycleState()
				state.SetPodGroupSchedulingCycle(pgState)
				m := framework.NewDefaultNodeToStatus()
				for _, n := range leaf("leaf-1") {
					m.Set(n, fwk.NewStatus(fwk.Unschedulable, "Insufficient nvidia.com/gpu"))
				}
				if tc.refuse && i == 0 {
					m.Set("leaf-1-node-1", fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint"))
				}
				res, st := pl.PostFilter(context.Background(), state, p, m)
				nominated[p.Name] = ""
				if st.IsSuccess() {
					nominated[p.Name] = res.NominatedNodeName
				} else if st.Code() != fwk.UnschedulableAndUnresolvable {
					t.Errorf("PostFilter of %s: %v %s; want Success or UnschedulableAndUnresolvable", p.Name, st.Code(), st.Message())
				}
			}
			if diff := cmp.Diff(tc.wantNominated, nominated); diff != "" {
				t.Errorf("nominated nodes (-want +got):\n%s", diff)
			}
			for _, p := range pods {
				if tc.refuse && p.Name == "g-0" {
					continue // rejected: it never reaches Permit
				}
				state := framework.NewCycleState()
				state.SetPodGroupSchedulingCycle(pgState)
				if st, _ := pl.Permit(context.Background(), state, p, nominated[p.Name]); !st.IsSuccess() {
					t.Errorf("Permit of %s: %v", p.Name, st.Message())
				}
			}
			list, err := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, p := range list.Items {
				left = append(left, p.Name)
			}
			slices.Sort(left)
			if diff := cmp.Diff(tc.wantLeft, left); diff != "" {
				t.Errorf("pods left after Permit (-want +got):\n%s", diff)
			}
			close(recorder.Events)
			var got []string
			for e := range recorder.Events {
				got = append(got, e)
				if strings.Contains(e, " Preempted ") && !strings.Contains(e, "ns/g") {
					t.Errorf("event %q does not name the preemptor ns/g", e)
				}
			}
			if len(got) != tc.wantEvents {
				t.Errorf("events %q: want %d", got, tc.wantEvents)
			}
			if tc.refuse {
				return
			}
			// The next cycle: a's pods are still on their nodes, terminating.
			for _, ni := range nodes {
				for _, pi := range ni.GetPods() {
					pi.GetPod().DeletionTimestamp = ptr.To(metav1.Now())
				}
			}
			_, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), podGroupInfo{name: "g", pods: pods}, &fwk.Placement{Nodes: nodes})
			if st.Code() != fwk.Unschedulable || !strings.Contains(st.Message(), "waiting for 4 pods of the gangs it preempted to leave") {
				t.Errorf("the next cycle: %v %q; want it waiting for a's 4 pods", st.Code(), st.Message())
			}
		})
	}
}

// TestPostFilterOutsideGangs: a pod outside a PodGroup cycle is left to DefaultPreemption (Unschedulable), a
// pod of a PodGroup cycle that needs no preemption ends the PostFilter plugins (UnschedulableAndUnresolvable).
func TestPostFilterOutsideGangs(t *testing.T) {
	pl := &Plugin{}
	pod := gpuPod("g", 0)
	_, st := pl.PostFilter(context.Background(), framework.NewCycleState(), pod, framework.NewDefaultNodeToStatus())
	inGroup := framework.NewCycleState()
	inGroup.SetPodGroupSchedulingCycle(framework.NewCycleState())
	_, st2 := pl.PostFilter(context.Background(), inGroup, pod, framework.NewDefaultNodeToStatus())
	if got := []fwk.Code{st.Code(), st2.Code()}; !slices.Equal(got, []fwk.Code{fwk.Unschedulable, fwk.UnschedulableAndUnresolvable}) {
		t.Errorf("codes %v: want [Unschedulable UnschedulableAndUnresolvable]", got)
	}
}
