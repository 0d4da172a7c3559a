package placer

import (
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/wellknown"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inNamespace returns p moved to namespace ns.
func inNamespace(p *corev1.Pod, ns string) *corev1.Pod {
	p.Namespace = ns
	return p
}

// leaving marks p as terminating.
func leaving(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{}
	return p
}

func TestPreemptionEvictable(t *testing.T) {
	on := Preemption{Enabled: true, MaxVictims: DefaultMaxVictims}
	yes := map[string]string{wellknown.GangLabel: "g", wellknown.PreemptibleLabel: "true"}
	koord := map[string]string{wellknown.GangLabel: "g", wellknown.KoordinatorPreemptibleLabel: "true"}
	no := map[string]string{wellknown.GangLabel: "g"}
	for _, tc := range []struct {
		name string
		p    Preemption
		pods []*corev1.Pod
		want map[string]bool
	}{
		{name: "every pod labelled", p: on, pods: []*corev1.Pod{pod("g-0", 8, yes, nil), pod("g-1", 8, yes, nil)},
			want: map[string]bool{"ns/g": true}},
		{name: "fabricmap's and Koordinator's labels alike", p: on, pods: []*corev1.Pod{pod("g-0", 8, yes, nil), pod("g-1", 8, koord, nil)},
			want: map[string]bool{"ns/g": true}},
		{name: "one pod labelled of two", p: on, pods: []*corev1.Pod{pod("g-0", 8, yes, nil), pod("g-1", 8, no, nil)},
			want: map[string]bool{"ns/g": false}},
		{name: "a pod added without the label protects its gang", p: on,
			pods: []*corev1.Pod{pod("g-0", 8, yes, nil), pod("g-1", 8, yes, nil), pod("added", 8, no, nil)},
			want: map[string]bool{"ns/g": false}},
		{name: "the label set to false", p: on, pods: []*corev1.Pod{pod("g-0", 8, merge(yes, map[string]string{wellknown.PreemptibleLabel: "false"}), nil)},
			want: map[string]bool{"ns/g": false}},
		{name: "a terminating pod without the label is leaving anyway", p: on, pods: []*corev1.Pod{pod("g-0", 8, yes, nil), leaving(pod("g-1", 8, no, nil))},
			want: map[string]bool{"ns/g": true}},
		{name: "pods of no gang are no victims", p: on, pods: []*corev1.Pod{pod("plain", 8, map[string]string{wellknown.PreemptibleLabel: "true"}, nil)},
			want: map[string]bool{}},
		{name: "preemption off", p: Preemption{MaxVictims: 1}, pods: []*corev1.Pod{pod("g-0", 8, yes, nil)},
			want: map[string]bool{"ns/g": false}},
		{name: "namespace allowed", p: Preemption{Enabled: true, MaxVictims: 1, Namespaces: []string{"batch", "ns"}},
			pods: []*corev1.Pod{pod("g-0", 8, yes, nil), inNamespace(pod("g-0", 8, yes, nil), "team-a")},
			want: map[string]bool{"ns/g": true, "team-a/g": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.evictable(tc.pods)); diff != "" {
				t.Errorf("evictable (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGangPreemptionTraits: a gang is preemptible only when all its pods say so, preempts only below its
// lowest priority, and evicts nobody when any pod says preemptionPolicy Never.
func TestGangPreemptionTraits(t *testing.T) {
	type traits struct {
		Priority, PreemptorPriority int32
		Preemptible, NeverPreempts  bool
	}
	labels := map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}
	withPrio := func(p *corev1.Pod, prio int32, policy corev1.PreemptionPolicy) *corev1.Pod {
		p.Spec.Priority = &prio
		if policy != "" {
			p.Spec.PreemptionPolicy = &policy
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want traits
	}{
		{name: "one priority", pods: []*corev1.Pod{withPrio(pod("g-0", 8, labels, nil), 1000, ""), withPrio(pod("g-1", 8, labels, nil), 1000, "")},
			want: traits{Priority: 1000, PreemptorPriority: 1000}},
		{name: "mixed priorities preempt below the lowest", pods: []*corev1.Pod{withPrio(pod("g-0", 8, labels, nil), 1000, ""), withPrio(pod("g-1", 8, labels, nil), 100, "")},
			want: traits{Priority: 1000, PreemptorPriority: 100}},
		{name: "no priority is 0", pods: []*corev1.Pod{pod("g-0", 8, labels, nil), withPrio(pod("g-1", 8, labels, nil), 100, "")},
			want: traits{Priority: 100, PreemptorPriority: 0}},
		{name: "one pod says Never", pods: []*corev1.Pod{withPrio(pod("g-0", 8, labels, nil), 1000, corev1.PreemptLowerPriority),
			withPrio(pod("g-1", 8, labels, nil), 1000, corev1.PreemptNever)},
			want: traits{Priority: 1000, PreemptorPriority: 1000, NeverPreempts: true}},
		{name: "all preemptible", pods: pods("g", 2, true, merge(labels, map[string]string{wellknown.PreemptibleLabel: "true"}), nil),
			want: traits{Preemptible: true}},
		{name: "one preemptible of two", pods: []*corev1.Pod{pod("g-0", 8, merge(labels, map[string]string{wellknown.PreemptibleLabel: "true"}), nil), pod("g-1", 8, labels, nil)},
			want: traits{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := newGang("ns/g", FormLabels, tc.pods, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := traits{Priority: g.Priority, PreemptorPriority: g.PreemptorPriority, Preemptible: g.Preemptible, NeverPreempts: g.NeverPreempts}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("gang traits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreemptionRules(t *testing.T) {
	for _, tc := range []struct {
		name             string
		p                Preemption
		never            bool
		victims          []string
		invalid, refusal string // "" when valid, when the gang may preempt
		tooMany          string // "" when the victims are within the cap
	}{
		{name: "defaults", p: Preemption{Enabled: true, MaxVictims: DefaultMaxVictims}, victims: []string{"a/1", "a/2"}},
		{name: "off", p: Preemption{MaxVictims: 1}, refusal: "preemption is off"},
		{name: "Never", p: Preemption{Enabled: true, MaxVictims: 1}, never: true, refusal: "preemptionPolicy Never"},
		{name: "at the cap", p: Preemption{Enabled: true, MaxVictims: 2}, victims: []string{"a/1", "a/2"}},
		{name: "over the cap", p: Preemption{Enabled: true, MaxVictims: 1}, victims: []string{"a/1", "a/2"}, tooMany: "would evict 2 gangs ([a/1 a/2]), more than --preemption-max-victims=1"},
		{name: "no cap is no setting", p: Preemption{Enabled: true}, invalid: "--preemption-max-victims=0"},
		{name: "an empty namespace", p: Preemption{Enabled: true, MaxVictims: 1, Namespaces: []string{"a", ""}}, invalid: "an empty namespace name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.invalid == "" && err != nil || tc.invalid != "" && (err == nil || !strings.Contains(err.Error(), tc.invalid)) {
				t.Errorf("Validate = %v, want an error containing %q", err, tc.invalid)
			}
			if tc.invalid != "" {
				return
			}
			got := []string{tc.p.refusal(&GatedGang{NeverPreempts: tc.never}), tc.p.tooMany(tc.victims)}
			want := []string{tc.refusal, tc.tooMany}
			for i := range got {
				if want[i] == "" && got[i] != "" || want[i] != "" && !strings.Contains(got[i], want[i]) {
					t.Errorf("refusal, tooMany = %q; want %q", got, want)
				}
			}
		})
	}
}
