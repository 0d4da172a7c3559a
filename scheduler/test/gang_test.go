package test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// podGroupScheduled is the condition the scheduler sets on a PodGroup after each attempt at the whole group;
// podGroupUnschedulable its reason when the group fits nowhere.
const (
	podGroupScheduled     = "PodGroupScheduled"
	podGroupUnschedulable = "Unschedulable"
)

// gang is one PodGroup: minCount pods of 8 GPUs, its topology key (empty: none), its DP x PP labels (0: none)
// and its annotations.
type gang struct {
	name        string
	pods        int
	key         string
	dp, pp      int
	annotations map[string]string
	// priorityClass is its pods' PriorityClass (empty: none, priority 0).
	priorityClass string
}

// podGroup is g's PodGroup: a gang of g.pods pods that must all be placed, with g's topology key and labels.
func (g gang) podGroup(ns string) *schedulingv1alpha2.PodGroup {
	pg := &schedulingv1alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: g.name, Annotations: g.annotations, Labels: map[string]string{}},
		Spec: schedulingv1alpha2.PodGroupSpec{SchedulingPolicy: schedulingv1alpha2.PodGroupSchedulingPolicy{
			Gang: &schedulingv1alpha2.GangSchedulingPolicy{MinCount: int32(g.pods)},
		}},
	}
	if g.key != "" {
		pg.Spec.SchedulingConstraints = &schedulingv1alpha2.PodGroupSchedulingConstraints{
			Topology: []schedulingv1alpha2.TopologyConstraint{{Key: g.key}},
		}
	}
	if g.dp > 0 {
		pg.Labels[wellknown.DPLabel] = fmt.Sprint(g.dp)
	}
	if g.pp > 0 {
		pg.Labels[wellknown.PPLabel] = fmt.Sprint(g.pp)
	}
	return pg
}

// pod is pod i of g: it joins the PodGroup, names fabricmap-scheduler, asks for a whole 8-GPU node and selects
// the nodes of pool. No kubelet runs it: the test reads where the scheduler binds it.
func (g gang) pod(ns, pool string, i int) *corev1.Pod {
	gpus := resource.MustParse("8")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", g.name, i)},
		Spec: corev1.PodSpec{
			SchedulerName:     schedulerName,
			PriorityClassName: g.priorityClass,
			SchedulingGroup:   &corev1.PodSchedulingGroup{PodGroupName: &g.name},
			NodeSelector:      map[string]string{fabrictest.PoolLabel: pool},
			Containers: []corev1.Container{{
				Name: "trainer", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{fabrictest.GPUResource: gpus, corev1.ResourceCPU: resource.MustParse("1")},
					Limits:   corev1.ResourceList{fabrictest.GPUResource: gpus},
				},
			}},
		},
	}
}

// submit creates g's PodGroup and pods in ns (pool's nodes), and deletes them when the test ends: the pods at
// once (no kubelet would confirm a graceful deletion), the PodGroup without its podgroup-protection finalizer
// (the controller that lifts it runs in kube-controller-manager, not here), each waited for until gone.
func (g gang) submit(t *testing.T, ctx context.Context, ns, pool string) {
	t.Helper()
	c := testenv.Shared.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	pg := g.podGroup(ns)
	if err := c.Create(ctx, pg); err != nil {
		t.Fatalf("creating PodGroup %s/%s: %v", ns, g.name, err)
	}
	var created []*corev1.Pod
	t.Cleanup(func() { fabrictest.DeleteGang(t, testenv.Shared.Client, pg, created) })
	for i := range g.pods {
		p := g.pod(ns, pool, i)
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("creating Pod %s/%s: %v", ns, p.Name, err)
		}
		created = append(created, p)
	}
}

// scheduledCondition returns the PodGroupScheduled condition the scheduler set on the PodGroup, nil before its
// first attempt.
func scheduledCondition(ctx context.Context, ns, name string) (*metav1.Condition, error) {
	pg := &schedulingv1alpha2.PodGroup{}
	if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pg); err != nil {
		return nil, err
	}
	return apimeta.FindStatusCondition(pg.Status.Conditions, podGroupScheduled), nil
}

// boundNodes returns the nodes the pods of ns are bound to, sorted, and how many of its pods are not bound.
func boundNodes(ctx context.Context, ns string) (nodes []string, pending int, err error) {
	var pods corev1.PodList
	if err := testenv.Shared.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, 0, err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending++
			continue
		}
		nodes = append(nodes, p.Spec.NodeName)
	}
	slices.Sort(nodes)
	return nodes, pending, nil
}

// countBy counts nodes by their value of the label key, as the API server holds them.
func countBy(ctx context.Context, nodes []string, key string) (map[string]int, error) {
	out := map[string]int{}
	for _, name := range nodes {
		var n corev1.Node
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return nil, err
		}
		out[n.Labels[key]]++
	}
	return out, nil
}

// waitBound waits until every pod of g in ns is bound, and returns the nodes they are bound to.
func waitBound(t *testing.T, ctx context.Context, ns string, g gang) []string {
	t.Helper()
	var nodes []string
	testenv.Eventually(t, time.Minute, "every pod of the gang bound", func() (bool, string) {
		var pending int
		var err error
		nodes, pending, err = boundNodes(ctx, ns)
		if err != nil {
			return false, err.Error()
		}
		c, _ := scheduledCondition(ctx, ns, g.name)
		return pending == 0 && len(nodes) == g.pods, fmt.Sprintf("bound to %v, %d unbound; PodGroupScheduled %+v", nodes, pending, c)
	})
	return nodes
}
