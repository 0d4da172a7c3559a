package test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/scheduler/fabricplacement"
)

// preemptLeaves are the preemption test's pool: two leaves of 4 nodes under spine-p, beside the placement
// tests' fabric (its label keys are computed with that fabric, so that both share one tree).
var preemptLeaves = []fabrictest.Leaf{
	{Pool: "preempt", Spine: "spine-p", Name: "leaf-p1", Nodes: 4},
	{Pool: "preempt", Spine: "spine-p", Name: "leaf-p2", Nodes: 4},
}

// The PriorityClasses of the preemption test: the gangs that fill the leaves and the one that needs a leaf.
const (
	lowPriority  = "fabricmap-test-low"
	highPriority = "fabricmap-test-high"
)

// TestPreemption runs fabricmap-scheduler on two leaves of 4 nodes: gang low (4 pods) fills one leaf, gangs
// b and c (2 pods each, the same low priority) fill the other. Gang high (4 pods held to one leaf, higher
// priority) fits nowhere: the scheduler preempts low, the one whole gang that frees a leaf (b and c would be
// two), so every pod of low gets the DisruptionTarget condition, an Event naming high, and is deleted, while
// b and c are untouched; high waits while low's pods terminate (the test plays the kubelet that confirms
// their end), then lands in low's leaf. Last, gang mid (4 pods, the priority of b and c) fits nowhere and may
// preempt no one of its priority or higher: it stays pending with fabricmap's reason, and no pod moves.
func TestPreemption(t *testing.T) {
	testenv.Require(t)
	ctx := t.Context()
	c := testenv.Shared.Client
	labels, k := fabrictest.Labels(t, append(slices.Clone(fabric), preemptLeaves...))
	fabrictest.CreateNodes(t, ctx, c, preemptLeaves, labels)
	t.Cleanup(func() { deletePreemptNodes(t) })
	for name, value := range map[string]int32{lowPriority: 100, highPriority: 1000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if err := c.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating PriorityClass %s: %v", name, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), pc) })
	}
	startScheduler(t)

	low := gang{name: "low", pods: 4, key: k.Leaf, priorityClass: lowPriority}
	b := gang{name: "b", pods: 2, key: k.Leaf, priorityClass: lowPriority}
	cc := gang{name: "c", pods: 2, key: k.Leaf, priorityClass: lowPriority}
	low.submit(t, ctx, "fs-pre-low", "preempt")
	lowLeaf := leafOf(t, waitBound(t, ctx, "fs-pre-low", low), k.Leaf)
	b.submit(t, ctx, "fs-pre-b", "preempt")
	waitBound(t, ctx, "fs-pre-b", b)
	cc.submit(t, ctx, "fs-pre-c", "preempt")
	waitBound(t, ctx, "fs-pre-c", cc)
	others := podsIn(t, "fs-pre-b", "fs-pre-c")

	// A higher-priority gang preempts the whole lower-priority gang in its leaf. (No subtests: a gang lives
	// until the end of the test that submitted it.)
	high := gang{name: "high", pods: 4, key: k.Leaf, priorityClass: highPriority}
	checkPreempts(t, high, low, lowLeaf, k.Leaf, others)
	checkCannotHelp(t, k.Leaf)
}

// checkPreempts submits high, which needs the leaf that victim holds, and checks that every pod of victim is
// preempted (condition, Event, deletion) while high waits, that high then lands in that leaf, and that the pods
// others are untouched.
func checkPreempts(t *testing.T, high, victim gang, victimLeaf, leafKey string, others []corev1.Pod) {
	ctx := t.Context()
	c := testenv.Shared.Client
	high.submit(t, ctx, "fs-pre-high", "preempt")
	testenv.Eventually(t, time.Minute, "every pod of gang low preempted", func() (bool, string) {
		pods := podsIn(t, "fs-pre-low")
		var marked []string
		for _, p := range pods {
			if p.DeletionTimestamp != nil && disruptedBy(p, "fs-pre-high/"+high.name) {
				marked = append(marked, p.Name)
			}
		}
		return len(marked) == victim.pods, fmt.Sprintf("preempted %v of %d pods", marked, len(pods))
	})
	testenv.Eventually(t, 30*time.Second, "gang high waiting for the victims to leave", func() (bool, string) {
		cond, err := scheduledCondition(ctx, "fs-pre-high", high.name)
		if err != nil || cond == nil {
			return false, fmt.Sprintf("condition %v, %v", cond, err)
		}
		return cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "waiting"), cond.Message
	})
	if nodes, _, err := boundNodes(ctx, "fs-pre-high"); err != nil || len(nodes) > 0 {
		t.Fatalf("gang high bound to %v (%v) while its victims still terminate", nodes, err)
	}
	checkPreemptedEvents(t, ctx, "fs-pre-low", victim.pods+1) // each pod and the PodGroup
	// The kubelet would confirm the pods' end; none runs here.
	for _, p := range podsIn(t, "fs-pre-low") {
		if err := c.Delete(ctx, &p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	nodes := waitBound(t, ctx, "fs-pre-high", high)
	leaves, err := countBy(ctx, nodes, leafKey)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{victimLeaf: high.pods}, leaves); diff != "" {
		t.Errorf("gang high bound to %v: pods per leaf (-want +got):\n%s", nodes, diff)
	}
	checkUntouched(t, others, podsIn(t, "fs-pre-b", "fs-pre-c"))
}

// checkCannotHelp submits gang mid, of the priority of the gangs b and c, which needs a leaf when high and b
// and c hold both: no gang of lower priority holds one, so it stays pending with fabricmap's reason and no pod
// moves.
func checkCannotHelp(t *testing.T, leafKey string) {
	ctx := t.Context()
	before := podsIn(t, "fs-pre-b", "fs-pre-c", "fs-pre-high")
	mid := gang{name: "mid", pods: 4, key: leafKey, priorityClass: lowPriority}
	mid.submit(t, ctx, "fs-pre-mid", "preempt")
	testenv.Eventually(t, time.Minute, "gang mid unschedulable with fabricmap's reason", func() (bool, string) {
		cond, err := scheduledCondition(ctx, "fs-pre-mid", mid.name)
		if err != nil || cond == nil {
			return false, fmt.Sprintf("condition %v, %v", cond, err)
		}
		return cond.Status == metav1.ConditionFalse && cond.Reason == podGroupUnschedulable &&
			strings.Contains(cond.Message, "preemption cannot help"), cond.Message
	})
	time.Sleep(2 * time.Second) // a preemption would have started by now: the scheduler retries at once
	if nodes, _, err := boundNodes(ctx, "fs-pre-mid"); err != nil || len(nodes) > 0 {
		t.Fatalf("gang mid bound to %v (%v)", nodes, err)
	}
	checkUntouched(t, before, podsIn(t, "fs-pre-b", "fs-pre-c", "fs-pre-high"))
}

// leafOf returns the one leaf (value of leafKey) that holds every node of nodes.
func leafOf(t *testing.T, nodes []string, leafKey string) string {
	t.Helper()
	leaves, err := countBy(t.Context(), nodes, leafKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(leaves) != 1 {
		t.Fatalf("nodes %v span leaves %v: want one", nodes, leaves)
	}
	return slices.Collect(maps.Keys(leaves))[0]
}

// podsIn lists the pods of the namespaces, by namespace and name.
func podsIn(t *testing.T, namespaces ...string) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	for _, ns := range namespaces {
		var list corev1.PodList
		if err := testenv.Shared.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing the pods of %s: %v", ns, err)
		}
		out = append(out, list.Items...)
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	return out
}

// disruptedBy says whether the pod carries the DisruptionTarget condition of a preemption by the scheduler
// that names the PodGroup preemptor.
func disruptedBy(p corev1.Pod, preemptor string) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.DisruptionTarget && c.Reason == corev1.PodReasonPreemptionByScheduler && strings.Contains(c.Message, preemptor)
	})
}

// checkUntouched fails unless after holds the pods of before, each the same pod (UID), on the same node and not
// being deleted.
func checkUntouched(t *testing.T, before, after []corev1.Pod) {
	t.Helper()
	view := func(pods []corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, fmt.Sprintf("%s/%s %s on %s deleting=%v", p.Namespace, p.Name, p.UID, p.Spec.NodeName, p.DeletionTimestamp != nil))
		}
		return out
	}
	if diff := cmp.Diff(view(before), view(after)); diff != "" {
		t.Errorf("pods of the other gangs changed (-before +after):\n%s", diff)
	}
}

// checkPreemptedEvents waits for n Events of reason Preempted in ns (its pods and its PodGroup), each naming
// the preemptor fs-pre-high/high.
func checkPreemptedEvents(t *testing.T, ctx context.Context, ns string, n int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "Preempted Events naming the preemptor", func() (bool, string) {
		var list eventsv1.EventList
		if err := testenv.Shared.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, e := range list.Items {
			if e.Reason == fabricplacement.ReasonPreempted && strings.Contains(e.Note, "fs-pre-high/high") {
				got = append(got, e.Regarding.Kind+"/"+e.Regarding.Name)
			}
		}
		return len(got) >= n, fmt.Sprintf("%d of %d events: %v", len(got), len(list.Items), got)
	})
}

// deletePreemptNodes deletes the pool's nodes, so that later tests see the placement tests' cluster alone.
func deletePreemptNodes(t *testing.T) {
	for _, l := range preemptLeaves {
		for i := 1; i <= l.Nodes; i++ {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fabrictest.NodeName(l, i)}}
			if err := testenv.Shared.Client.Delete(context.Background(), n); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting Node %s: %v", n.Name, err)
			}
		}
	}
}
