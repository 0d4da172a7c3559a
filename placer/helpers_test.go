package placer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Priorities of the test priority classes.
const (
	lowClass  = "placer-test-low"
	highClass = "placer-test-high"
)

// bed is one test's share of the cluster: a namespace, its nodes and HyperNodes, removed at the end.
type bed struct {
	t     *testing.T
	ctx   context.Context
	c     client.Client
	ns    string
	nodes []string
	hns   []string
}

// beds numbers the test namespaces.
var beds atomic.Int32

// newBed makes a namespace of its own and the priority classes (the scheduler runs already).
func newBed(t *testing.T) *bed {
	t.Helper()
	b := &bed{t: t, ctx: context.Background(), c: testenv.Shared.Client, ns: fmt.Sprintf("placer-%d", beds.Add(1))}
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns}})
	for name, v := range map[string]int32{lowClass: 100, highClass: 1000} {
		err := b.c.Create(b.ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	installPodGroupCRD(t)
	t.Cleanup(b.cleanup)
	return b
}

func (b *bed) create(obj client.Object) {
	b.t.Helper()
	if err := b.c.Create(b.ctx, obj); err != nil {
		b.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// cleanup removes the bed's pods (at once), nodes and HyperNodes.
func (b *bed) cleanup() {
	var pods corev1.PodList
	_ = b.c.List(b.ctx, &pods, client.InNamespace(b.ns))
	for i := range pods.Items {
		_ = b.c.Delete(b.ctx, &pods.Items[i], client.GracePeriodSeconds(0))
	}
	for _, n := range b.nodes {
		_ = b.c.Delete(b.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	for _, h := range b.hns {
		_ = b.c.Delete(b.ctx, &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: h}})
	}
	_ = wait.PollUntilContextTimeout(b.ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		var l corev1.PodList
		_ = b.c.List(ctx, &l, client.InNamespace(b.ns))
		return len(l.Items) == 0, nil
	})
}

// addNodes creates Ready, untainted nodes with 8 GPUs each (no kubelet: the status is written here).
func (b *bed) addNodes(names ...string) {
	b.t.Helper()
	for _, name := range names {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{wellknown.HostnameLabel: name}}}
		b.create(n)
		b.nodes = append(b.nodes, name)
		res := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("512Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "KubeletReady"}}}
		if err := b.c.Status().Update(b.ctx, n); err != nil {
			b.t.Fatalf("marking node %s ready: %v", name, err)
		}
		// The API server's TaintNodesByCondition admission taints a new node not-ready; the node lifecycle
		// controller (not running here) would lift it once the node is Ready.
		n.Spec.Taints = nil
		if err := b.c.Update(b.ctx, n); err != nil {
			b.t.Fatalf("untainting node %s: %v", name, err)
		}
	}
}

// addHyperNode creates an owned HyperNode of the given tier whose members are nodes (tier 1) or HyperNodes.
func (b *bed) addHyperNode(name string, tier int, tierName string, members ...string) {
	b.t.Helper()
	typ := topologyv1alpha1.MemberTypeHyperNode
	if tier == 1 {
		typ = topologyv1alpha1.MemberTypeNode
	}
	hn := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: hypernodegen.OwnedSelector()},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier, TierName: tierName}}
	for _, m := range members {
		hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: typ,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: m}}})
	}
	b.create(hn)
	b.hns = append(b.hns, name)
}

// podSpec is one pod to create.
type podSpec struct {
	name        string
	gpus        int
	labels      map[string]string
	annotations map[string]string
	class       string
	gated       bool
	gates       []string // scheduling gates of others, besides the placer's
	node        string   // bound at creation (a pod already running)
}

// addPod creates a pod.
func (b *bed) addPod(s podSpec) *corev1.Pod {
	b.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: b.ns, Labels: s.labels, Annotations: s.annotations},
		Spec: corev1.PodSpec{PriorityClassName: s.class, NodeName: s.node, Containers: []corev1.Container{{Name: "c", Image: "none",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(s.gpus), resource.DecimalSI)},
				Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(s.gpus), resource.DecimalSI)}}}}},
	}
	if s.gated {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: wellknown.Gate}}
	}
	for _, g := range s.gates {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
	}
	b.create(p)
	return p
}

// gang creates n gated pods name-0 … name-(n-1) with the given labels and annotations; rank labels are added.
func (b *bed) gang(name string, n, gpus int, class string, labels, annotations map[string]string) {
	b.t.Helper()
	for i := range n {
		l := map[string]string{wellknown.RankLabel: fmt.Sprint(i)}
		for k, v := range labels {
			l[k] = v
		}
		b.addPod(podSpec{name: fmt.Sprintf("%s-%d", name, i), gpus: gpus, labels: l, annotations: annotations, class: class, gated: true})
	}
}

// podGroup creates a scheduler-plugins PodGroup.
func (b *bed) podGroup(name string, minMember int64, annotations map[string]string) {
	b.t.Helper()
	b.podGroupOf(PodGroupGVK, name, map[string]any{"minMember": minMember}, annotations)
}

// podGroupOf creates a PodGroup of the given kind with the given spec.
func (b *bed) podGroupOf(gvk schema.GroupVersionKind, name string, spec map[string]any, annotations map[string]string) {
	b.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace(b.ns)
	u.SetAnnotations(annotations)
	b.create(u)
}

// pods returns the pods whose names start with prefix-, sorted by name.
func (b *bed) pods(prefix string) []corev1.Pod {
	b.t.Helper()
	var l corev1.PodList
	if err := b.c.List(b.ctx, &l, client.InNamespace(b.ns)); err != nil {
		b.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if strings.HasPrefix(p.Name, prefix+"-") {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// eventually polls cond until it holds, failing with its last message after timeout.
func (b *bed) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	b.t.Helper()
	msg := ""
	err := wait.PollUntilContextTimeout(b.ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var ok bool
		ok, msg = cond()
		return ok, nil
	})
	if err != nil {
		b.t.Fatalf("%s: not within %s: %s", what, timeout, msg)
	}
}

// bound waits until the n pods of a gang are bound, each on the node of its recorded decision, and returns
// rank → node.
func (b *bed) bound(gang string, n int, timeout time.Duration) []string {
	b.t.Helper()
	var nodes []string
	b.eventually(timeout, "gang "+gang+" bound where planned", func() (bool, string) {
		pods := b.pods(gang)
		if len(pods) != n {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		nodes = make([]string, n)
		for _, p := range pods {
			d, ok := decisionOf(&p)
			switch {
			case !ok:
				return false, "pod " + p.Name + " has no decision"
			case p.Spec.NodeName == "":
				return false, "pod " + p.Name + " is not bound"
			case p.Spec.NodeName != d.Node:
				b.t.Fatalf("pod %s bound on %s, but the plan says %s", p.Name, p.Spec.NodeName, d.Node)
			case Gated(&p):
				b.t.Fatalf("pod %s is bound and still gated", p.Name)
			}
			nodes[d.Rank] = d.Node
		}
		return true, ""
	})
	return nodes
}

// event waits for an Event with reason on the named object whose message contains want.
func (b *bed) event(object, reason, want string, timeout time.Duration) {
	b.t.Helper()
	b.eventually(timeout, "event "+reason+" on "+object, func() (bool, string) {
		var l corev1.EventList
		if err := b.c.List(b.ctx, &l, client.InNamespace(b.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range l.Items {
			if e.InvolvedObject.Name == object && e.Reason == reason && strings.Contains(e.Message, want) {
				return true, ""
			}
			seen = append(seen, e.InvolvedObject.Name+"/"+e.Reason+": "+e.Message)
		}
		return false, strings.Join(seen, "\n")
	})
}

// reap plays the kubelet for evicted pods: it deletes terminating pods at once.
func (b *bed) reap() int {
	var l corev1.PodList
	_ = b.c.List(b.ctx, &l, client.InNamespace(b.ns))
	n := 0
	for i := range l.Items {
		if l.Items[i].DeletionTimestamp != nil {
			_ = b.c.Delete(b.ctx, &l.Items[i], client.GracePeriodSeconds(0))
			n++
		}
	}
	return n
}

// startPlacer runs a placer in this process until the returned stop is called (or the test ends).
func (b *bed) startPlacer() (stop func()) {
	b.t.Helper()
	return b.startPlacerWith(5 * time.Minute)
}

// startPlacerWith runs a placer with the given reservation timeout.
func (b *bed) startPlacerWith(reservationTimeout time.Duration) (stop func()) {
	b.t.Helper()
	o := testOptions()
	o.ReservationTimeout = reservationTimeout
	return b.startPlacerOptions(o)
}

// testOptions are the options of the tests' placers: quick passes, no servers, preemption and sick links as
// the binary's defaults have them (preemption on, up to DefaultMaxVictims gangs, every namespace; nodes with
// sick links avoided).
func testOptions() Config {
	return Config{MetricsAddr: "0", HealthAddr: "0", ReservationTimeout: 5 * time.Minute, Resync: 3 * time.Second,
		Retry: 500 * time.Millisecond, SkipNameValidation: true, Preemption: Preemption{Enabled: true, MaxVictims: DefaultMaxVictims},
		AvoidDegraded: true}
}

// startPlacerOptions runs a placer with the given options (a registry of its own when o has none).
func (b *bed) startPlacerOptions(o Config) (stop func()) {
	b.t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("PLACER_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	mgr, err := NewManager(testenv.Shared.Config, o, log)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			b.t.Errorf("placer: %v", err)
		}
	}
	b.t.Cleanup(stop)
	return stop
}

var crdOnce sync.Once

// installPodGroupCRD installs minimal scheduler-plugins, Koordinator (legacy group) and Volcano PodGroup CRDs
// (spec kept as is) once.
func installPodGroupCRD(t *testing.T) {
	t.Helper()
	crdOnce.Do(func() {
		for _, gvk := range []schema.GroupVersionKind{PodGroupGVK, LegacyPodGroupGVK, VolcanoPodGroupGVK} {
			crd := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				// *.k8s.io groups are protected: Koordinator's PodGroup CRD carries such an annotation too.
				"metadata": map[string]any{"name": "podgroups." + gvk.Group,
					"annotations": map[string]any{"api-approved.kubernetes.io": "unapproved, a PodGroup for tests"}},
				"spec": map[string]any{
					"group": gvk.Group, "scope": "Namespaced",
					"names": map[string]any{"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup", "listKind": "PodGroupList"},
					"versions": []any{map[string]any{"name": gvk.Version, "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
				},
			}}
			c := testenv.Shared.Client
			if err := c.Create(context.Background(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("installing the %s CRD: %v", gvk, err)
			}
			err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				l := &unstructured.UnstructuredList{}
				l.SetGroupVersionKind(gvk.GroupVersion().WithKind("PodGroupList"))
				return c.List(ctx, l) == nil, nil
			})
			if err != nil {
				t.Fatalf("the %s CRD is not served: %v", gvk, err)
			}
		}
	})
}

// podNamed is a pod known only by its name, as a write that must read the live pod first takes it.
func podNamed(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
