package placer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// testSchedulerPlacedLeftAlone: a gang whose pods are fabricmap-scheduler's (spec.schedulerName), though it
// carries the placer's gate and gang label, is neither pinned nor ungated, while a later gang of the stock
// scheduler beside it is placed and bound (so the placer has passed over the first).
func testSchedulerPlacedLeftAlone(t *testing.T) {
	b := newBed(t)
	b.addNodes("sep-n1", "sep-n2")
	b.addHyperNode("sep-leaf", 1, "leaf", "sep-n1", "sep-n2")
	b.startPlacer()
	for i := range 2 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "theirs-" + string(rune('0'+i)), Namespace: b.ns,
				Labels: map[string]string{wellknown.GangLabel: "theirs", wellknown.SizeLabel: "2"}},
			Spec: corev1.PodSpec{SchedulerName: wellknown.SchedulerName, SchedulingGates: []corev1.PodSchedulingGate{{Name: wellknown.Gate}},
				Containers: []corev1.Container{{Name: "c", Image: "none"}}},
		}
		b.create(p)
	}
	b.gang("ours", 2, 8, highClass, map[string]string{wellknown.GangLabel: "ours", wellknown.SizeLabel: "2"}, nil)
	b.bound("ours", 2, 30*time.Second)
	time.Sleep(2 * time.Second) // a few more passes of the placer
	for _, p := range b.pods("theirs") {
		if !Gated(&p) {
			t.Errorf("pod %s of fabricmap-scheduler ungated by the placer", p.Name)
		}
		if _, ok := decisionOf(&p); ok {
			t.Errorf("pod %s of fabricmap-scheduler has a placer decision", p.Name)
		}
		if p.Spec.Affinity != nil {
			t.Errorf("pod %s of fabricmap-scheduler pinned: %v", p.Name, p.Spec.Affinity)
		}
	}
}
