package chart

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/placer/placerapp"
	"github.com/fabricmap/fabricmap/wellknown"
)

const (
	placerSA = "fabricmap-placer" // the chart's placer service account for release "fabricmap"
	// placerNS holds the test's gangs: the one namespace placer.preemption.namespaces allows.
	placerNS = "chart-placer"
)

// placerBed is the little cluster the placer works on: two 8-GPU nodes under one leaf, a running preemptible
// low-priority gang "victim" on them, a gated high-priority gang "urgent", a gated pod of no gang that also
// carries a gate of someone else's, and a plain pod in the release's namespace.
func placerBed(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	for _, ns := range []string{placerNS, namespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for name, v := range map[string]int32{"chart-test-low": 100, "chart-test-high": 1000} {
		if err := c.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	hn := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "chart-placer-leaf", Labels: hypernodegen.OwnedSelector()},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, TierName: "leaf"}}
	for _, name := range []string{"chart-placer-n1", "chart-placer-n2"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
		res := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}
		n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "KubeletReady"}}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Spec.Taints = nil // TaintNodesByCondition's not-ready taint; no node lifecycle controller runs here
		if err := c.Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}})
	}
	if err := c.Create(ctx, hn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), hn) })

	pod := func(ns, name string, labels map[string]string, class, node string, gates ...string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{PriorityClassName: class, NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "none",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}}}}}
		for _, g := range gates {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), p, client.GracePeriodSeconds(0)) })
	}
	for i := range 2 {
		pod(placerNS, fmt.Sprintf("victim-%d", i), map[string]string{wellknown.GangLabel: "victim", wellknown.SizeLabel: "2", wellknown.RankLabel: fmt.Sprint(i),
			wellknown.PreemptibleLabel: "true"}, "chart-test-low", fmt.Sprintf("chart-placer-n%d", i+1))
	}
	for i := range 2 {
		pod(placerNS, fmt.Sprintf("urgent-%d", i), map[string]string{wellknown.GangLabel: "urgent", wellknown.SizeLabel: "2", wellknown.RankLabel: fmt.Sprint(i)},
			"chart-test-high", "", wellknown.Gate)
	}
	pod(placerNS, "gated-other", nil, "", "", wellknown.Gate, "example.com/other")
	pod(namespace, "outsider", nil, "", "")
}

// runPlacer runs the placer as the chart's Deployment does (its rendered arguments), as the placer's service
// account, until the test ends.
func runPlacer(t *testing.T, deploy appsv1.Deployment, kubeconfig string) {
	t.Helper()
	args := deploy.Spec.Template.Spec.Containers[0].Args
	if !strings.Contains(strings.Join(args, " "), "--preemption-namespaces="+placerNS) {
		t.Fatalf("the Deployment does not pass placer.preemption.namespaces to the placer: %v", args)
	}
	// What the pod's environment gives (a service account, no second replica, ports) comes last, so it wins.
	args = append(args, "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-addr=0", "--health-addr=0",
		"--resync=2s", "--log-format=text", "--log-level=error")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- placerapp.Main(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the placer: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the placer did not stop")
		}
	})
}

// eventually polls cond every 200ms until it holds, failing with its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	msg := ""
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var ok bool
		ok, msg = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %s", what, timeout, msg)
	}
}

// TestPlacerWritesOnlyGatedPodsAndItsTaint installs the placer's service account, RBAC and admission policies
// as the chart renders them (placer.preemption.namespaces: [chart-placer]) and runs the placer with the
// Deployment's arguments as that account: it evicts a lower-priority gang, reserves its nodes and pins and
// ungates the gang it placed, all admitted. Then the same account's other writes are refused: an ungated pod,
// someone else's gate, labels, containers, tolerations and annotations that are not the placer's, node labels,
// other taints, a NoExecute reservation, a cordon, and an eviction outside the allowed namespaces.
func TestPlacerWritesOnlyGatedPodsAndItsTaint(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := testenv.Shared.Client
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	objs := render(t, writeValues(t, map[string]any{"placer": map[string]any{"enabled": true,
		"preemption": map[string]any{"namespaces": []string{placerNS}}}}))
	installAccess(t, ctx, admin, objs, "placer", map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 4, "ValidatingAdmissionPolicyBinding": 4})
	var deploy appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == placerSA {
			fromUnstructured(t, o, &deploy)
		}
	}
	if deploy.Name == "" {
		t.Fatal("the chart renders no placer Deployment")
	}
	placerBed(t, ctx, admin)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, placerSA, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asPlacer := tokenClient(t, tr.Status.Token)
	placerCS := kubernetes.NewForConfigOrDie(tokenConfig(tr.Status.Token))

	// The policies take effect a moment after their bindings exist: wait until each refuses a write.
	outsider := client.ObjectKey{Namespace: namespace, Name: "outsider"}
	eventually(t, time.Minute, "the admission policies refusing the placer's writes", func() (bool, string) {
		errs := []error{
			patchAs(ctx, admin, asPlacer, outsider, &corev1.Pod{}, func(o client.Object) { o.SetAnnotations(map[string]string{"example.com/note": "x"}) }),
			patchAs(ctx, admin, asPlacer, client.ObjectKey{Name: "chart-placer-n1"}, &corev1.Node{}, func(o client.Object) { o.SetLabels(nil) }),
			placerCS.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "outsider"},
				DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}),
		}
		for i, want := range []string{"may change only pods gated", "may change only its reservation", "may evict only pods"} {
			if !strings.Contains(fmt.Sprint(errs[i]), want) {
				return false, fmt.Sprint(errs[i])
			}
		}
		return true, ""
	})

	runPlacer(t, deploy, tokenKubeconfig(t, tr.Status.Token))
	taint := placer.TaintValue(placerNS + "/urgent")
	eventually(t, time.Minute, "the victims evicted and their nodes reserved", func() (bool, string) {
		for _, name := range []string{"victim-0", "victim-1"} {
			var p corev1.Pod
			if err := admin.Get(ctx, client.ObjectKey{Namespace: placerNS, Name: name}, &p); err != nil || p.DeletionTimestamp == nil {
				return false, fmt.Sprintf("pod %s not evicted (%v)", name, err)
			}
		}
		for _, name := range []string{"chart-placer-n1", "chart-placer-n2"} {
			var n corev1.Node
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil || !hasTaint(&n, wellknown.ReservedTaint, taint) {
				return false, fmt.Sprintf("node %s not reserved: %v (%v)", name, n.Spec.Taints, err)
			}
		}
		return true, ""
	})
	for _, name := range []string{"victim-0", "victim-1"} { // the kubelet's part: the evicted pods go
		_ = admin.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: placerNS, Name: name}}, client.GracePeriodSeconds(0))
	}
	eventually(t, time.Minute, "the urgent gang pinned and ungated", func() (bool, string) {
		for _, name := range []string{"urgent-0", "urgent-1"} {
			var p corev1.Pod
			if err := admin.Get(ctx, client.ObjectKey{Namespace: placerNS, Name: name}, &p); err != nil {
				return false, err.Error()
			}
			if p.Annotations[wellknown.PlacementAnnotation] == "" || placer.Gated(&p) {
				return false, fmt.Sprintf("pod %s: decision %q, gates %v", name, p.Annotations[wellknown.PlacementAnnotation], p.Spec.SchedulingGates)
			}
		}
		return true, ""
	})

	podKey := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: placerNS, Name: name} }
	nodeKey := client.ObjectKey{Name: "chart-placer-n1"}
	for _, tc := range []struct {
		name   string
		key    client.ObjectKey
		pod    func(*corev1.Pod)
		node   func(*corev1.Node)
		evict  bool   // a dry-run eviction of key instead of a patch
		refuse string // "" when admitted
	}{
		{name: "pin and ungate a gated pod", key: podKey("gated-other"), pod: func(p *corev1.Pod) {
			p.Annotations = map[string]string{wellknown.PlacementAnnotation: `{"node":"chart-placer-n1"}`}
			p.Spec.Tolerations = append(p.Spec.Tolerations, placer.Toleration(placerNS+"/other"))
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"chart-placer-n1"}}}}}}}}
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/other"}}
		}},
		{name: "an ungated pod", key: podKey("urgent-0"), pod: func(p *corev1.Pod) { p.Annotations["example.com/note"] = "x" },
			refuse: "may change only pods gated by fabricmap.io/placement; pod chart-placer/urgent-0 is not"},
		{name: "someone else's gate", key: podKey("gated-other"), pod: func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: wellknown.Gate}}
		}, refuse: "may remove only its own scheduling gate"},
		{name: "a label of a gated pod", key: podKey("gated-other"), pod: func(p *corev1.Pod) { p.Labels = map[string]string{"team": "x"} },
			refuse: "not its labels"},
		{name: "the image of a gated pod", key: podKey("gated-other"), pod: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "evil" },
			refuse: "containers"},
		{name: "an annotation not its own", key: podKey("gated-other"), pod: func(p *corev1.Pod) { p.Annotations = map[string]string{"example.com/note": "x"} },
			refuse: "may change only the annotation fabricmap.io/placement"},
		{name: "a toleration of another taint", key: podKey("gated-other"), pod: func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists})
		}, refuse: "may add only tolerations of its taint fabricmap.io/reserved"},
		{name: "release a reservation", key: nodeKey, node: func(n *corev1.Node) {
			n.Spec.Taints = nil
			delete(n.Annotations, wellknown.ReservedForAnnotation)
			delete(n.Annotations, wellknown.ReservedUntilAnnotation)
		}},
		{name: "a node label", key: nodeKey, node: func(n *corev1.Node) { n.Labels["example.com/rack"] = "r1" }, refuse: "not its labels"},
		{name: "another taint", key: nodeKey, node: func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoSchedule})
		}, refuse: "may change only its own taint fabricmap.io/reserved"},
		{name: "a NoExecute reservation", key: nodeKey, node: func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: wellknown.ReservedTaint, Value: taint, Effect: corev1.TaintEffectNoExecute}}
		}, refuse: "must have the effect NoSchedule"},
		{name: "a cordon", key: nodeKey, node: func(n *corev1.Node) { n.Spec.Unschedulable = true }, refuse: "other spec fields"},
		{name: "a node annotation not its own", key: nodeKey, node: func(n *corev1.Node) { n.Annotations["example.com/note"] = "x" },
			refuse: "may change only the annotations fabricmap.io/reserved-for and fabricmap.io/reserved-until"},
		{name: "evict in an allowed namespace", key: podKey("gated-other"), evict: true},
		{name: "evict elsewhere", key: client.ObjectKey{Namespace: namespace, Name: "outsider"}, evict: true,
			refuse: "may evict only pods in the namespaces chart-placer; refused to evict " + namespace + "/outsider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			switch {
			case tc.evict:
				err = placerCS.PolicyV1().Evictions(tc.key.Namespace).Evict(ctx, &policyv1.Eviction{
					ObjectMeta:    metav1.ObjectMeta{Namespace: tc.key.Namespace, Name: tc.key.Name},
					DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
			case tc.pod != nil:
				err = patchAs(ctx, admin, asPlacer, tc.key, &corev1.Pod{}, func(o client.Object) { tc.pod(o.(*corev1.Pod)) })
			default:
				err = patchAs(ctx, admin, asPlacer, tc.key, &corev1.Node{}, func(o client.Object) { tc.node(o.(*corev1.Node)) })
			}
			assertAdmission(t, err, tc.refuse)
		})
	}
}

// patchAs reads the object at key (as admin) into obj, changes it and has writer send the change as a merge
// patch, as a dry run: admission decides, nothing is stored.
func patchAs(ctx context.Context, admin, writer client.Client, key client.ObjectKey, obj client.Object, change func(client.Object)) error {
	if err := admin.Get(ctx, key, obj); err != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	orig := obj.DeepCopyObject().(client.Object)
	if obj.GetLabels() == nil {
		obj.SetLabels(map[string]string{})
	}
	if obj.GetAnnotations() == nil {
		obj.SetAnnotations(map[string]string{})
	}
	change(obj)
	return writer.Patch(ctx, obj, client.MergeFrom(orig), client.DryRunAll)
}

// assertAdmission checks that err is nil when refuse is empty, else an admission refusal whose message holds
// refuse.
func assertAdmission(t *testing.T, err error, refuse string) {
	t.Helper()
	switch {
	case refuse == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case refuse == "":
	case err == nil:
		t.Fatalf("admitted; want refused with %q", refuse)
	case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refuse):
		t.Fatalf("refused with %v; want %q", err, refuse)
	}
}

// hasTaint says whether the node has the taint key=value.
func hasTaint(n *corev1.Node, key, value string) bool {
	for _, tn := range n.Spec.Taints {
		if tn.Key == key && tn.Value == value {
			return true
		}
	}
	return false
}
