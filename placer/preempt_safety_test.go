package placer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

// highNeverClass has highClass's value and preemptionPolicy Never.
const highNeverClass = "placer-test-high-never"

// victimPod is a running pod of a would-be victim gang, bound to node n1 or n2 of its case.
type victimPod struct {
	gang   string
	node   string // n1 or n2
	labels map[string]string
}

// testPreemptionSafety: a high-priority gang (two pods of 8 GPUs) that fits only if the gangs running on the
// two nodes of a leaf go evicts them, whole, only when every rule allows it; otherwise it stays gated with a
// GangUnplaceable Event that says why, and nothing is evicted or reserved.
func testPreemptionSafety(t *testing.T) {
	never := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: highNeverClass}, Value: 1000, PreemptionPolicy: ptrTo(corev1.PreemptNever)}
	if err := testenv.Shared.Client.Create(t.Context(), never); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	yes := map[string]string{wellknown.PreemptibleLabel: "true"}
	whole := []victimPod{{"victim", "n1", yes}, {"victim", "n2", yes}}
	on := Preemption{Enabled: true, MaxVictims: DefaultMaxVictims}
	for _, tc := range []struct {
		name        string
		victims     []victimPod
		victimClass string
		classes     [2]string // of the preempting gang's two pods
		preemption  Preemption
		want        string // in the GangUnplaceable Event; "" when the victims are evicted
	}{
		{name: "every rule allows", victims: whole, preemption: on},
		{name: "one pod of the victim gang labelled", victims: []victimPod{{"victim", "n1", yes}, {"victim", "n2", nil}},
			preemption: on, want: "no running gang is preemptible"},
		{name: "preemptionPolicy Never", victims: whole, classes: [2]string{highNeverClass, highNeverClass}, preemption: on,
			want: "it may not preempt: its pods have preemptionPolicy Never"},
		{name: "victims of equal priority", victims: whole, victimClass: highClass, preemption: on, want: "no running gang is preemptible and of lower priority"},
		{name: "a preempting pod of the victims' priority", victims: whole, classes: [2]string{highClass, lowClass}, preemption: on,
			want: "no running gang is preemptible and of lower priority"},
		{name: "namespace not allowed", victims: whole, preemption: Preemption{Enabled: true, MaxVictims: DefaultMaxVictims, Namespaces: []string{"elsewhere"}},
			want: "no running gang is preemptible"},
		{name: "max victims", victims: []victimPod{{"v1", "n1", yes}, {"v2", "n2", yes}}, preemption: Preemption{Enabled: true, MaxVictims: 1},
			want: "would evict 2 gangs ([%s/v1 %s/v2]), more than --preemption-max-victims=1"},
		{name: "max victims reached, not exceeded", victims: []victimPod{{"v1", "n1", yes}, {"v2", "n2", yes}}, preemption: Preemption{Enabled: true, MaxVictims: 2}},
		{name: "preemption disabled", victims: whole, preemption: Preemption{MaxVictims: DefaultMaxVictims},
			want: "it may not preempt: preemption is off (--preemption-enabled=false)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBed(t)
			prefix := fmt.Sprintf("safe%d", beds.Load())
			b.twoNodeLeaf(prefix)
			size := map[string]int{}
			for _, v := range tc.victims {
				size[v.gang]++
			}
			rank := map[string]int{}
			var victims []string
			for _, v := range tc.victims {
				name := fmt.Sprintf("%s-%d", v.gang, rank[v.gang])
				victims = append(victims, name)
				labels := merge(v.labels, map[string]string{wellknown.GangLabel: v.gang, wellknown.SizeLabel: fmt.Sprint(size[v.gang]), wellknown.RankLabel: fmt.Sprint(rank[v.gang])})
				rank[v.gang]++
				class := tc.victimClass
				if class == "" {
					class = lowClass
				}
				b.addPod(podSpec{name: name, gpus: 8, labels: labels, class: class, node: prefix + "-" + v.node})
			}
			o := testOptions()
			o.Preemption = tc.preemption
			b.startPlacerOptions(o)
			for i, class := range tc.classes {
				if class == "" {
					class = highClass
				}
				b.addPod(podSpec{name: fmt.Sprintf("urgent-%d", i), gpus: 8, class: class, gated: true,
					labels: map[string]string{wellknown.GangLabel: "urgent", wellknown.SizeLabel: "2", wellknown.RankLabel: fmt.Sprint(i)}})
			}

			if tc.want == "" {
				b.event("urgent-0", ReasonPreempting, "evicted gangs", 20*time.Second)
				for _, name := range victims {
					if !b.terminating(name) {
						t.Errorf("victim pod %s not evicted", name)
					}
				}
				return
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, b.ns, b.ns)
			}
			b.event("urgent-0", ReasonUnplaceable, want, 20*time.Second)
			for _, name := range victims {
				if b.terminating(name) {
					t.Errorf("pod %s evicted", name)
				}
			}
			for _, n := range []string{prefix + "-n1", prefix + "-n2"} {
				if r := b.reservation(n); r.Gang != "" {
					t.Errorf("node %s reserved (%+v) although nothing may be evicted", n, r)
				}
			}
			for _, p := range b.pods("urgent") {
				if !Gated(&p) {
					t.Errorf("pod %s ungated", p.Name)
				}
			}
		})
	}
}

// terminating says whether the bed's pod name is being deleted (or gone).
func (b *bed) terminating(name string) bool {
	b.t.Helper()
	var p corev1.Pod
	err := b.c.Get(b.ctx, client.ObjectKey{Namespace: b.ns, Name: name}, &p)
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return p.DeletionTimestamp != nil
}
