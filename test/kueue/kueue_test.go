package kueue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// The pod labels and annotations of Kueue's plain-pod integration that the cases set.
const (
	queueNameLabel     = "kueue.x-k8s.io/queue-name"
	podGroupNameLabel  = "kueue.x-k8s.io/pod-group-name"
	podGroupTotalCount = "kueue.x-k8s.io/pod-group-total-count"
	// admissionGate is the scheduling gate Kueue's pod webhook puts on every pod it manages.
	admissionGate = "kueue.x-k8s.io/admission"
)

// kueueClient is a cluster-admin client that knows the built-in kinds and Kueue's v1beta2 kinds.
func kueueClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := kueuev1beta2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(testenv.Shared.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func objectKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// tasCase is one pod group submitted to Kueue with a topology annotation.
type tasCase struct {
	name string
	// pool is the node pool (and so the leaves) the case's ResourceFlavor selects.
	pool string
	pods int
	// annotation is the topology annotation (required or preferred) set to the leaf key.
	annotation string
	// admitted says whether Kueue must admit the group; when it must not, pendingMessage is in its reason.
	admitted       bool
	pendingMessage string
	// leaves is how many leaves the admitted group's pods must span; wantLeaf, when set, one of them.
	leaves   int
	wantLeaf string
	// level is the label key the annotation names; empty: leafKey. domains, when level is set, is how many
	// values of it the admitted group's pods must span.
	level   string
	domains int
}

// levelKey is the label key tc's annotation names.
func (tc tasCase) levelKey() string {
	if tc.level != "" {
		return tc.level
	}
	return leafKey
}

// TestTopologyAwareScheduling runs Kueue's Topology Aware Scheduling on the Kueue Topology and node labels
// fabricmap's aggregator wrote from the agents' reports, with the real kube-scheduler binding the pods Kueue
// admits: a group that requires one leaf lands in the only leaf big enough; one that requires a leaf larger
// than any stays pending with Kueue's reason; one that prefers a leaf spans the fewest leaves it can.
func TestTopologyAwareScheduling(t *testing.T) {
	testenv.Require(t)
	kueueBinary(t) // skip or fail at once, before starting anything
	ctx := t.Context()
	c := kueueClient(t)

	// fabricmap's side: the nodes and their reports, the aggregator's labels and Kueue Topology.
	createFabric(t, ctx)
	startAggregator(t)
	topo := waitForFabricmapOutputs(t, ctx)
	checkNVLinkHyperNodes(t, ctx)
	t.Logf("fabricmap's Kueue Topology %s has levels %v", topo.Name, topo.Spec.Levels)
	var levels []string
	for _, l := range topo.Spec.Levels {
		levels = append(levels, l.NodeLabel)
	}
	// The switch tiers above the NVLink levels (the leaves hang under the root: tier-1 is filled with the leaf),
	// then the NVLink domain and its sub-domain, which every node carries with the domain.
	if want := []string{hypernodegen.DefaultLabelKeys().Tiers[1], leafKey, nvlinkKey, hypernodegen.DefaultLabelKeys().AcceleratorSubDomain, corev1.LabelHostname}; !slices.Equal(levels, want) {
		t.Fatalf("Topology %s levels %v, want %v", topo.Name, levels, want)
	}

	stopScheduler, err := testenv.StartScheduler()
	if err != nil {
		t.Fatalf("starting kube-scheduler: %v", err)
	}
	t.Cleanup(stopScheduler)
	startKueueWithWebhooks(t, ctx, c)

	for _, tc := range []tasCase{
		{name: "required leaf", pool: "required", pods: 3, annotation: kueuev1beta2.PodSetRequiredTopologyAnnotation,
			admitted: true, leaves: 1, wantLeaf: "ib-leaf-r1"},
		{name: "required leaf larger than any", pool: "toolarge", pods: 3, annotation: kueuev1beta2.PodSetRequiredTopologyAnnotation,
			// Kueue counts the pods the biggest leaf of the pool holds: 2 of the 3.
			pendingMessage: fmt.Sprintf(`topology %q allows to fit only 2 out of 3 pod(s)`, topologyName)},
		{name: "preferred leaf", pool: "preferred", pods: 5, annotation: kueuev1beta2.PodSetPreferredTopologyAnnotation,
			admitted: true, leaves: 2, wantLeaf: "ib-leaf-p1"},
		// A multi-leaf NVLink domain is one Kueue domain per leaf: 3 pods fit in one part, inside one leaf…
		{name: "required NVLink domain", pool: "nvl-domain", pods: 3, annotation: kueuev1beta2.PodSetRequiredTopologyAnnotation,
			level: nvlinkKey, admitted: true, leaves: 1, domains: 1},
		// …and "one leaf" still means one leaf for nodes in NVLink domains.
		{name: "required leaf across NVLink domains", pool: "nvl-leaf", pods: 4, annotation: kueuev1beta2.PodSetRequiredTopologyAnnotation,
			admitted: true, leaves: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCase(t, c, tc)
		})
	}
}

// startKueueWithWebhooks installs Kueue's CRDs, starts Kueue, registers its admission webhooks, and waits until
// the API server calls them: a pod with a queue name comes back from a dry-run create with Kueue's gate.
func startKueueWithWebhooks(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	mod := kueueModuleDir(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	p := newKueueProcess(t)
	installKueueCRDs(t, mod, p)
	p.start(t)
	mutating, validating := kueueWebhooks(t, mod, p)
	for _, o := range []client.Object{mutating, validating} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
	ns := "kueue-webhook-probe"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "Kueue's pod webhook to gate a pod with a queue name", func() (bool, string) {
		pod := groupPod(ns, "probe", "probe", 0, 1, "", "")
		if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
			return false, err.Error()
		}
		return hasGate(pod, admissionGate), fmt.Sprintf("scheduling gates %v", pod.Spec.SchedulingGates)
	})
}

func hasGate(p *corev1.Pod, name string) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == name })
}

// groupPod is pod i of a Kueue pod group of total pods in namespace ns, queued to queue, asking the whole CPU of
// a node, with the topology annotation set to the leaf key (none when annotation is empty).
func groupPod(ns, queue, group string, i, total int, annotation, level string) *corev1.Pod {
	cpu := resource.MustParse(nodeCPU)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ns,
			Name:        fmt.Sprintf("%s-%d", group, i),
			Labels:      map[string]string{queueNameLabel: queue, podGroupNameLabel: group},
			Annotations: map[string]string{podGroupTotalCount: fmt.Sprint(total)},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "work", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}},
		}}},
	}
	if annotation != "" {
		p.Annotations[annotation] = level
	}
	return p
}

// runCase gives the case a namespace, a ResourceFlavor of its pool on fabricmap's Topology, a ClusterQueue with
// ample quota (so only the topology can hold the group back) and a LocalQueue, submits its pod group and checks
// the outcome from the Workload's admission and the pods' nodes.
func runCase(t *testing.T, c client.Client, tc tasCase) {
	ctx := t.Context()
	ns := "tas-" + tc.pool
	create := func(o client.Object) {
		t.Helper()
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	flavor := kueuev1beta2.ResourceFlavorReference(ns)
	create(&kueuev1beta2.ResourceFlavor{
		ObjectMeta: metav1.ObjectMeta{Name: string(flavor)},
		Spec: kueuev1beta2.ResourceFlavorSpec{
			NodeLabels:   map[string]string{poolLabel: tc.pool},
			TopologyName: ptr(kueuev1beta2.TopologyReference(topologyName)),
		},
	})
	create(&kueuev1beta2.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueuev1beta2.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			ResourceGroups: []kueuev1beta2.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueuev1beta2.FlavorQuotas{{Name: flavor, Resources: []kueuev1beta2.ResourceQuota{
					{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1000")},
				}}},
			}},
		},
	})
	create(&kueuev1beta2.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "queue"},
		Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuev1beta2.ClusterQueueReference(ns)},
	})
	testenv.Eventually(t, time.Minute, "ClusterQueue "+ns+" active", func() (bool, string) {
		var cq kueuev1beta2.ClusterQueue
		if err := c.Get(ctx, objectKey(ns), &cq); err != nil {
			return false, err.Error()
		}
		cond := apimeta.FindStatusCondition(cq.Status.Conditions, kueuev1beta2.ClusterQueueActive)
		return cond != nil && cond.Status == metav1.ConditionTrue, fmt.Sprintf("conditions %+v", cq.Status.Conditions)
	})

	for i := range tc.pods {
		create(groupPod(ns, "queue", "group", i, tc.pods, tc.annotation, tc.levelKey()))
	}
	if !tc.admitted {
		checkPending(t, c, ns, tc)
		return
	}
	wl := admittedWorkload(t, c, ns)
	assigned := assignedNodes(t, wl)
	pods := boundPods(t, c, ns, tc.pods)
	podNodes := map[string]int{}
	for _, p := range pods {
		podNodes[p.Spec.NodeName]++
	}
	if diff := cmp.Diff(assigned, podNodes); diff != "" {
		t.Errorf("kube-scheduler bound the pods elsewhere than Kueue's topology assignment (-assigned +bound):\n%s", diff)
	}
	leaves, domains := map[string]int{}, map[string]int{}
	for n, count := range podNodes {
		var node corev1.Node
		if err := c.Get(ctx, objectKey(n), &node); err != nil {
			t.Fatal(err)
		}
		if node.Labels[poolLabel] != tc.pool {
			t.Errorf("pod on node %s of pool %q, want pool %q", n, node.Labels[poolLabel], tc.pool)
		}
		leaves[node.Labels[leafKey]] += count
		if tc.level != "" {
			domains[node.Labels[tc.level]] += count
		}
	}
	if tc.level != "" && (len(domains) != tc.domains || domains[""] > 0) {
		t.Errorf("the %d pods span %v by %s, want %d value(s), none missing", tc.pods, domains, tc.level, tc.domains)
	}
	t.Logf("pods per leaf (%s): %v; per node: %v", leafKey, leaves, podNodes)
	if len(leaves) != tc.leaves {
		t.Errorf("the %d pods span %d leaves %v, want %d", tc.pods, len(leaves), leaves, tc.leaves)
	}
	if _, ok := leaves[tc.wantLeaf]; tc.wantLeaf != "" && !ok {
		t.Errorf("no pod in leaf %s: %v", tc.wantLeaf, leaves)
	}
}

// workloadOf returns the namespace's one Workload (the pod group's), nil while there is none.
func workloadOf(t *testing.T, c client.Client, ns string) (*kueuev1beta2.Workload, string) {
	t.Helper()
	var list kueuev1beta2.WorkloadList
	if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		return nil, err.Error()
	}
	if len(list.Items) != 1 {
		return nil, fmt.Sprintf("%d Workloads in %s", len(list.Items), ns)
	}
	return &list.Items[0], ""
}

// admittedWorkload waits until the namespace's Workload is admitted and returns it.
func admittedWorkload(t *testing.T, c client.Client, ns string) *kueuev1beta2.Workload {
	t.Helper()
	var wl *kueuev1beta2.Workload
	testenv.Eventually(t, time.Minute, "the pod group's Workload admitted in "+ns, func() (bool, string) {
		var why string
		if wl, why = workloadOf(t, c, ns); wl == nil {
			return false, why
		}
		return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadAdmitted) && wl.Status.Admission != nil,
			fmt.Sprintf("conditions %+v", wl.Status.Conditions)
	})
	return wl
}

// checkPending waits until Kueue states why the namespace's Workload has no quota reserved, checks that it names
// the case's reason, and that no pod of it was let through to kube-scheduler.
func checkPending(t *testing.T, c client.Client, ns string, tc tasCase) {
	t.Helper()
	var msg string
	testenv.Eventually(t, time.Minute, "Kueue's reason for not admitting the Workload in "+ns, func() (bool, string) {
		wl, why := workloadOf(t, c, ns)
		if wl == nil {
			return false, why
		}
		cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Message == "" {
			return false, fmt.Sprintf("conditions %+v", wl.Status.Conditions)
		}
		msg = cond.Message
		return true, ""
	})
	t.Logf("Kueue: %s", msg)
	if !strings.Contains(msg, tc.pendingMessage) {
		t.Errorf("Workload's QuotaReserved message = %q, want it to contain %q", msg, tc.pendingMessage)
	}
	wl, _ := workloadOf(t, c, ns)
	if wl != nil && (wl.Status.Admission != nil || apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadAdmitted)) {
		t.Errorf("the Workload was admitted: %+v", wl.Status)
	}
	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" || !hasGate(&p, admissionGate) {
			t.Errorf("pod %s: node %q, gates %v; want unbound behind %s", p.Name, p.Spec.NodeName, p.Spec.SchedulingGates, admissionGate)
		}
	}
}

// boundPods waits until kube-scheduler has bound all n pods of the namespace and returns them.
func boundPods(t *testing.T, c client.Client, ns string, n int) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	testenv.Eventually(t, time.Minute, fmt.Sprintf("%d pods bound in %s", n, ns), func() (bool, string) {
		if err := c.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var unbound []string
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				unbound = append(unbound, fmt.Sprintf("%s (gates %v)", p.Name, p.Spec.SchedulingGates))
			}
		}
		return len(pods.Items) == n && len(unbound) == 0, fmt.Sprintf("%d pods, unbound: %v", len(pods.Items), unbound)
	})
	return pods.Items
}

// assignedNodes decodes the topology assignment of the Workload's one pod set into pods per node (its
// kubernetes.io/hostname level).
func assignedNodes(t *testing.T, wl *kueuev1beta2.Workload) map[string]int {
	t.Helper()
	psa := wl.Status.Admission.PodSetAssignments
	if len(psa) != 1 || psa[0].TopologyAssignment == nil {
		t.Fatalf("Workload %s: want one pod set with a topology assignment, got %+v", wl.Name, psa)
	}
	ta := psa[0].TopologyAssignment
	host := slices.Index(ta.Levels, corev1.LabelHostname)
	if host < 0 {
		t.Fatalf("Workload %s: topology assignment levels %v have no %s", wl.Name, ta.Levels, corev1.LabelHostname)
	}
	out := map[string]int{}
	for _, s := range ta.Slices {
		for i := range int(s.DomainCount) {
			out[levelValue(s.ValuesPerLevel[host], i)] += int(podCount(s.PodCounts, i))
		}
	}
	return out
}

// levelValue is the value of domain i of a slice at one level: the universal one, or prefix+root+suffix.
func levelValue(v kueuev1beta2.TopologyAssignmentSliceLevelValues, i int) string {
	if v.Universal != nil {
		return *v.Universal
	}
	ind := v.Individual
	return deref(ind.Prefix) + ind.Roots[i] + deref(ind.Suffix)
}

// podCount is the number of pods of domain i of a slice.
func podCount(c kueuev1beta2.TopologyAssignmentSlicePodCounts, i int) int32 {
	if c.Universal != nil {
		return *c.Universal
	}
	return c.Individual[i]
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
