package placer

import (
	"fmt"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// twoNodeLeaf makes nodes prefix-n1 and prefix-n2 under one leaf and a bound preemptible low-priority gang
// "victim" on them.
func (b *bed) twoNodeLeaf(prefix string) {
	b.t.Helper()
	b.addNodes(prefix+"-n1", prefix+"-n2")
	b.addHyperNode(prefix+"-leaf", 1, "leaf", prefix+"-n1", prefix+"-n2")
}

// testEvictionRefusedByPDB: a PodDisruptionBudget that forbids evicting a victim fails the attempt before
// anything is evicted or reserved; once the budget goes, the next pass preempts and the gang binds.
func testEvictionRefusedByPDB(t *testing.T) {
	b := newBed(t)
	b.twoNodeLeaf("pdb")
	b.startPlacer()
	b.gang("victim", 2, 8, lowClass, map[string]string{wellknown.GangLabel: "victim", wellknown.SizeLabel: "2", wellknown.PreemptibleLabel: "true"}, nil)
	b.bound("victim", 2, 30*time.Second)
	b.running("victim") // the Eviction API ignores budgets for Pending pods
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: b.ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{wellknown.GangLabel: "victim"}}}}
	b.create(pdb)
	b.gang("urgent", 2, 8, highClass, map[string]string{wellknown.GangLabel: "urgent", wellknown.SizeLabel: "2"}, nil)
	b.event("urgent-0", ReasonEvictRefused, "victim", 20*time.Second)
	for _, p := range b.pods("victim") {
		if p.DeletionTimestamp != nil {
			t.Fatalf("pod %s evicted despite its budget", p.Name)
		}
	}
	for _, n := range []string{"pdb-n1", "pdb-n2"} {
		if r := b.reservation(n); r.Gang != "" {
			t.Fatalf("node %s reserved (%+v) although the eviction was refused", n, r)
		}
	}
	if err := b.c.Delete(b.ctx, pdb); err != nil {
		t.Fatal(err)
	}
	b.eventually(20*time.Second, "victims evicted once the budget is gone", func() (bool, string) {
		b.reap()
		return len(b.pods("victim")) == 0, fmt.Sprintf("%d victim pods", len(b.pods("victim")))
	})
	b.bound("urgent", 2, 30*time.Second)
}

// testReservationLapses: victims that never leave hold the gang up only until the reservation's timeout; the
// taint is then lifted, and the gang binds once the room is really there.
func testReservationLapses(t *testing.T) {
	b := newBed(t)
	b.twoNodeLeaf("lapse")
	b.startPlacerWith(3 * time.Second)
	b.gang("victim", 2, 8, lowClass, map[string]string{wellknown.GangLabel: "victim", wellknown.SizeLabel: "2", wellknown.PreemptibleLabel: "true"}, nil)
	b.bound("victim", 2, 30*time.Second)
	b.gang("urgent", 2, 8, highClass, map[string]string{wellknown.GangLabel: "urgent", wellknown.SizeLabel: "2"}, nil)
	b.eventually(20*time.Second, "nodes reserved", func() (bool, string) {
		r := b.reservation("lapse-n1")
		return r.Gang == b.ns+"/urgent", fmt.Sprintf("%+v", r)
	})
	b.eventually(20*time.Second, "reservation lapsed", func() (bool, string) {
		r1, r2 := b.reservation("lapse-n1"), b.reservation("lapse-n2")
		return r1.Gang == "" && r2.Gang == "", fmt.Sprintf("%+v %+v", r1, r2)
	})
	for _, p := range b.pods("urgent") {
		if !Gated(&p) {
			t.Fatalf("pod %s ungated while the victims still hold the nodes", p.Name)
		}
	}
	b.reap()
	b.bound("urgent", 2, 30*time.Second)
}

// testRestartMidway: a controller that died after pinning some pods (rank 0 records the whole plan), or
// after pinning all and ungating some, leaves a gang that the next one finishes on the recorded nodes
// without planning it again (the recorded plan, rank 0 on n2, is not what a new plan would say).
func testRestartMidway(t *testing.T) {
	for i, tc := range []struct {
		name           string
		pinned, ungate int // how many ranks were pinned, and ungated, before the restart
	}{
		{"while pinning", 1, 0},
		{"while ungating", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBed(t)
			prefix := fmt.Sprintf("mid%d", i)
			b.twoNodeLeaf(prefix)
			b.gang("g", 2, 8, "", map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
			plan := []string{prefix + "-n2", prefix + "-n1"}
			for rank := range tc.pinned {
				d := Decision{Gang: b.ns + "/g", Node: plan[rank], Rank: rank, Explanation: "before the restart"}
				if rank == 0 {
					d.Ranks = plan
				}
				if _, err := pin(b.ctx, b.c, podNamed(b.ns, fmt.Sprintf("g-%d", rank)), d, plan[rank]); err != nil {
					t.Fatal(err)
				}
			}
			for rank := range tc.ungate {
				if _, err := ungate(b.ctx, b.c, podNamed(b.ns, fmt.Sprintf("g-%d", rank))); err != nil {
					t.Fatal(err)
				}
			}
			b.startPlacer()
			if nodes := b.bound("g", 2, 30*time.Second); nodes[0] != plan[0] || nodes[1] != plan[1] {
				t.Fatalf("ranks on %v, want the recorded %v", nodes, plan)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// running plays the kubelet: it marks the gang's bound pods Running and Ready.
func (b *bed) running(gang string) {
	b.t.Helper()
	for _, p := range b.pods(gang) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := b.c.Status().Update(b.ctx, &p); err != nil {
			b.t.Fatalf("marking pod %s running: %v", p.Name, err)
		}
	}
}
