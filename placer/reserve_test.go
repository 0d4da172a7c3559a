package placer

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// holdGate is a scheduling gate of the tests' own on a gang's pods: it keeps them unbound after the placer
// ungated them, the window between ungating and binding in which another pod could take a chosen node.
const holdGate = "example.com/hold"

// testReservedUntilBound: every placement reserves its nodes, not only a preempting one. A plain pod created
// between ungating and binding stays off the chosen nodes (the real kube-scheduler finds it unschedulable);
// once the gang binds, the reservation is released.
func testReservedUntilBound(t *testing.T) {
	b := newBed(t)
	b.twoNodeLeaf("rsv")
	b.startPlacer()
	b.heldGang("held")
	b.ungatedAndReserved("held", "rsv-n1", "rsv-n2")

	b.addPod(podSpec{name: "plain", gpus: 8})
	b.unschedulable("plain")
	assertUnbound(t, b, "plain")

	b.release("held")
	b.bound("held", 2, 30*time.Second)
	b.eventually(20*time.Second, "reservations released once bound", func() (bool, string) {
		for _, n := range []string{"rsv-n1", "rsv-n2"} {
			if r := b.reservation(n); r.Gang != "" {
				return false, fmt.Sprintf("node %s still reserved: %+v", n, r)
			}
		}
		return true, ""
	})
	assertUnbound(t, b, "plain")
}

// testReservationLapsesUnbound: a gang ungated but never bound holds its nodes only until the reservation
// times out; then a plain pod may use them.
func testReservationLapsesUnbound(t *testing.T) {
	b := newBed(t)
	b.twoNodeLeaf("unb")
	b.startPlacerWith(3 * time.Second)
	b.heldGang("held")
	b.ungatedAndReserved("held", "unb-n1", "unb-n2")
	b.eventually(20*time.Second, "reservations lapsed", func() (bool, string) {
		r1, r2 := b.reservation("unb-n1"), b.reservation("unb-n2")
		return r1.Gang == "" && r2.Gang == "", fmt.Sprintf("%+v %+v", r1, r2)
	})
	for _, p := range b.pods("held") {
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s bound on %s although its hold gate is still there", p.Name, p.Spec.NodeName)
		}
	}
	b.addPod(podSpec{name: "plain", gpus: 8})
	b.eventually(30*time.Second, "pod plain bound on a node freed by the lapse", func() (bool, string) {
		var p corev1.Pod
		if err := b.c.Get(b.ctx, client.ObjectKey{Namespace: b.ns, Name: "plain"}, &p); err != nil {
			return false, err.Error()
		}
		return slices.Contains([]string{"unb-n1", "unb-n2"}, p.Spec.NodeName), "node " + p.Spec.NodeName
	})
}

// heldGang creates a gang of two 8-GPU pods gated by the placer and by holdGate.
func (b *bed) heldGang(name string) {
	b.t.Helper()
	for i := range 2 {
		b.addPod(podSpec{name: fmt.Sprintf("%s-%d", name, i), gpus: 8, gated: true, gates: []string{holdGate},
			labels: map[string]string{wellknown.GangLabel: name, wellknown.SizeLabel: "2", wellknown.RankLabel: fmt.Sprint(i)}})
	}
}

// ungatedAndReserved waits until the placer has pinned and ungated the gang's pods (holdGate still holds
// them) and the nodes are reserved for it.
func (b *bed) ungatedAndReserved(gang string, nodes ...string) {
	b.t.Helper()
	b.eventually(30*time.Second, "gang "+gang+" pinned, ungated and its nodes reserved", func() (bool, string) {
		for _, p := range b.pods(gang) {
			if _, ok := decisionOf(&p); !ok || Gated(&p) {
				return false, "pod " + p.Name + " not pinned and ungated yet"
			}
			if p.Spec.NodeName != "" {
				b.t.Fatalf("pod %s bound on %s although its hold gate is still there", p.Name, p.Spec.NodeName)
			}
		}
		for _, n := range nodes {
			if r := b.reservation(n); r.Gang != b.ns+"/"+gang {
				return false, fmt.Sprintf("node %s reservation %+v", n, r)
			}
		}
		return true, ""
	})
}

// release removes holdGate from the gang's pods, which kube-scheduler may then bind.
func (b *bed) release(gang string) {
	b.t.Helper()
	for _, p := range b.pods(gang) {
		_, err := updatePod(b.ctx, b.c, podNamed(b.ns, p.Name), func(p *corev1.Pod) (bool, error) {
			p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == holdGate })
			return true, nil
		})
		if err != nil {
			b.t.Fatal(err)
		}
	}
}

// unschedulable waits until kube-scheduler has tried the pod and found no node for it (or bound it: the
// caller's assertUnbound says where).
func (b *bed) unschedulable(name string) {
	b.t.Helper()
	b.eventually(30*time.Second, "the scheduler to find pod "+name+" unschedulable", func() (bool, string) {
		var p corev1.Pod
		if err := b.c.Get(b.ctx, client.ObjectKey{Namespace: b.ns, Name: name}, &p); err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			return true, ""
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", p.Status.Conditions)
	})
}
