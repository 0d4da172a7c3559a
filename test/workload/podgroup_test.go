package workload

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// podGroupGVK is the kind of Kubernetes 1.36's PodGroup. k8s.io/api at fabricmap's version no longer carries
// scheduling/v1alpha2 (it moved on to v1alpha3), so PodGroups are written as unstructured objects with the
// field names of k8s.io/api v0.36's scheduling/v1alpha2.
var podGroupGVK = schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1alpha2", Kind: "PodGroup"}

// podGroupScheduled is the condition kube-scheduler sets on a PodGroup after each attempt at the whole group;
// podGroupUnschedulable its reason when the group fits nowhere.
const (
	podGroupScheduled     = "PodGroupScheduled"
	podGroupUnschedulable = "Unschedulable"
)

// podGroup is a PodGroup of a gang of minCount pods whose pods must all share one value of the node label
// key: the object docs/schedulers.md shows. No Workload is needed.
func podGroup(ns, name string, minCount int, key string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"schedulingPolicy":      map[string]any{"gang": map[string]any{"minCount": int64(minCount)}},
			"schedulingConstraints": map[string]any{"topology": []any{map[string]any{"key": key}}},
		},
	}}
	u.SetGroupVersionKind(podGroupGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// gangPod is pod i of the PodGroup group: it joins the group through spec.schedulingGroup, asks for a whole
// 8-GPU node and selects the nodes of pool. No kubelet runs it: the test reads where kube-scheduler binds it.
func gangPod(ns, group, pool string, i int) *corev1.Pod {
	gpus := resource.MustParse("8")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", group, i)},
		Spec: corev1.PodSpec{
			SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &group},
			NodeSelector:    map[string]string{fabrictest.PoolLabel: pool},
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

// submitGang creates the PodGroup and its pods, and deletes them when the test ends: the pods at once (no
// kubelet would confirm a graceful deletion), the PodGroup without its podgroup-protection finalizer (the
// controller that would lift it runs in kube-controller-manager, not here), each waited for until gone.
func submitGang(t *testing.T, ctx context.Context, ns, name, pool string, pods int, key string) {
	t.Helper()
	c := testenv.Shared.Client
	pg := podGroup(ns, name, pods, key)
	if err := c.Create(ctx, pg); err != nil {
		t.Fatalf("creating PodGroup %s/%s: %v", ns, name, err)
	}
	var created []*corev1.Pod
	t.Cleanup(func() { fabrictest.DeleteGang(t, testenv.Shared.Client, pg, created) })
	for i := range pods {
		p := gangPod(ns, name, pool, i)
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("creating Pod %s/%s: %v", ns, p.Name, err)
		}
		created = append(created, p)
	}
}

// scheduledCondition returns the PodGroupScheduled condition kube-scheduler set on the PodGroup, nil before
// its first attempt.
func scheduledCondition(ctx context.Context, ns, name string) (*metav1.Condition, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(podGroupGVK)
	if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, err
	}
	var pg struct {
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
		} `json:"status"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pg); err != nil {
		return nil, fmt.Errorf("reading the status of PodGroup %s/%s: %w", ns, name, err)
	}
	return apimeta.FindStatusCondition(pg.Status.Conditions, podGroupScheduled), nil
}

// boundNodes returns the nodes the gang's pods are bound to, sorted, and how many of its pods are not bound.
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

// nodeValues returns the distinct values, sorted, of the label key on nodes, as the API server holds them
// (kube-scheduler reads these objects); a node without the label counts as "".
func nodeValues(ctx context.Context, nodes []string, key string) ([]string, error) {
	var out []string
	for _, name := range nodes {
		var n corev1.Node
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return nil, err
		}
		if v := n.Labels[key]; !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}
