package test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// gateFabric is the fabric of TestPlacerGateLeftAlone, apart from the fabric of TestFabricmapScheduler: the
// held gang's leaf (2 nodes, one NVLink domain) and a control gang's (1 node), each under a spine of its own,
// so that the labels have every tier fabrictest.Labels names.
var gateFabric = []fabrictest.Leaf{
	{Pool: "held", Spine: "spine-g1", Name: "leaf-g1", Nodes: 2, NVLink: []string{nvlinkDomainG, nvlinkDomainG}},
	{Pool: "control", Spine: "spine-g2", Name: "leaf-g2", Nodes: 1},
}

// nvlinkDomainG is the NVLink domain (cluster UUID and clique) of the held gang's leaf.
const nvlinkDomainG = "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d.1"

// heldSettle is how long the held gang is watched, after the control gang was bound, for a write of the
// scheduler's.
const heldSettle = 5 * time.Second

// TestPlacerGateLeftAlone runs the real fabricmap-scheduler with a PodGroup whose pods the placer holds (they
// carry its scheduling gate, fabricmap.io/placement): while the gate is on, the scheduler neither binds a pod
// of the gang nor writes the PodGroup's status, though it binds a control gang submitted after it; once the
// gate is lifted it places the gang, in its leaf, and marks the PodGroup scheduled. With the placer's side
// (placer/scheduledelsewhere_test.go: the placer leaves fabricmap-scheduler's pods alone), the placer and the
// scheduler never both act on one gang.
func TestPlacerGateLeftAlone(t *testing.T) {
	testenv.Require(t)
	ctx := t.Context()
	c := testenv.Shared.Client
	labels, k := fabrictest.Labels(t, gateFabric)
	fabrictest.CreateNodes(t, ctx, c, gateFabric, labels)
	startScheduler(t)

	held := gang{name: "held", pods: 2}
	ns := "fs-" + held.name
	pods := submitHeld(t, ctx, ns, "held", held)
	// Submitted after the held gang: once it is bound, the scheduler has gone through its queue since.
	control := gang{name: "control", pods: 1}
	control.submit(t, ctx, "fs-"+control.name, "control")
	waitBound(t, ctx, "fs-"+control.name, control)

	for end := time.Now().Add(heldSettle); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		nodes, _, err := boundNodes(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) > 0 {
			t.Fatalf("the scheduler bound pods of a gang the placer holds to %v", nodes)
		}
		var pg schedulingv1alpha2.PodGroup
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: held.name}, &pg); err != nil {
			t.Fatal(err)
		}
		if len(pg.Status.Conditions) > 0 || statusWriters(&pg) != nil {
			t.Fatalf("the PodGroup of a gang the placer holds got a status (conditions %+v) from %v", pg.Status.Conditions, statusWriters(&pg))
		}
	}

	// The placer's part, as it ends it: the gate lifted (here without pinning, so the scheduler chooses).
	for _, p := range pods {
		testenv.Eventually(t, 10*time.Second, "the gate of "+p.Name+" lifted", func() (bool, string) {
			var cur corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
				return false, err.Error()
			}
			cur.Spec.SchedulingGates = nil
			err := c.Update(ctx, &cur)
			return err == nil, fmt.Sprint(err)
		})
	}
	nodes := waitBound(t, ctx, ns, held)
	leaves, err := countBy(ctx, nodes, k.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"leaf-g1": held.pods}, leaves); diff != "" {
		t.Errorf("gang bound to %v once ungated: pods per leaf (-want +got):\n%s", nodes, diff)
	}
	testenv.Eventually(t, 30*time.Second, "the PodGroup marked scheduled", func() (bool, string) {
		cond, err := scheduledCondition(ctx, ns, held.name)
		if err != nil || cond == nil {
			return false, fmt.Sprintf("condition %v, %v", cond, err)
		}
		return cond.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", *cond)
	})
}

// submitHeld creates g's PodGroup and pods in ns (pool's nodes) as the placer holds a gang, each pod behind its
// scheduling gate (wellknown.Gate), and removes them when the test ends; it returns the pods.
func submitHeld(t *testing.T, ctx context.Context, ns, pool string, g gang) []*corev1.Pod {
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
	t.Cleanup(func() { fabrictest.DeleteGang(t, c, pg, created) })
	for i := range g.pods {
		p := g.pod(ns, pool, i)
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: wellknown.Gate}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("creating Pod %s/%s: %v", ns, p.Name, err)
		}
		created = append(created, p)
	}
	return created
}

// statusWriters lists the field managers that wrote the object's status subresource.
func statusWriters(o client.Object) []string {
	var out []string
	for _, m := range o.GetManagedFields() {
		if m.Subresource == "status" {
			out = append(out, m.Manager)
		}
	}
	return out
}
