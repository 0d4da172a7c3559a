package placer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/wellknown"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pod builds a gated pod requesting gpus GPUs.
func pod(name string, gpus int64, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: wellknown.Gate}}, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}}}},
	}
}

// pods builds n pods name-0 … with the labels (plus a rank label when ranked).
func pods(name string, n int, ranked bool, labels, annotations map[string]string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		l := merge(labels)
		if ranked {
			l[wellknown.RankLabel] = fmt.Sprint(i)
		}
		out = append(out, pod(fmt.Sprintf("%s-%d", name, i), 8, l, annotations))
	}
	return out
}

func podGroupObj(minMember int64, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"minMember": minMember}}}
	u.SetGroupVersionKind(PodGroupGVK)
	u.SetAnnotations(annotations)
	return u
}

func volcanoObj(spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(VolcanoPodGroupGVK)
	return u
}

func TestGangOf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		spec        func(*corev1.PodSpec)
		key         string
		form        Form
	}{
		{"none", nil, nil, nil, "", ""},
		{"plain label", map[string]string{wellknown.GangLabel: "g"}, nil, nil, "ns/g", FormLabels},
		{"podgroup", map[string]string{wellknown.PodGroupLabel: "pg"}, nil, nil, "ns/pg", FormPodGroup},
		{"legacy podgroup", map[string]string{wellknown.PodGroupLabelLegacy: "pg"}, nil, nil, "ns/pg", FormPodGroup},
		{"koordinator", nil, map[string]string{wellknown.KoordinatorGangName: "k"}, nil, "ns/k", FormKoordinator},
		{"volcano", nil, map[string]string{wellknown.VolcanoGroupAnnotation: "v"}, nil, "ns/v", FormVolcano},
		{"plain label wins", map[string]string{wellknown.GangLabel: "g", wellknown.PodGroupLabel: "pg"}, nil, nil, "ns/g", FormLabels},
		{"fabricmap-scheduler's pod", map[string]string{wellknown.GangLabel: "g"}, nil, func(s *corev1.PodSpec) { s.SchedulerName = wellknown.SchedulerName }, "", ""},
		{"Workload API PodGroup member", map[string]string{wellknown.PodGroupLabel: "pg"}, nil, func(s *corev1.PodSpec) {
			s.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptrTo("pg")}
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod("p", 1, tc.labels, tc.annotations)
			if tc.spec != nil {
				tc.spec(&p.Spec)
			}
			key, form := GangOf(p)
			if key != tc.key || form != tc.form {
				t.Errorf("GangOf = %q, %q; want %q, %q", key, form, tc.key, tc.form)
			}
		})
	}
}

func TestNewGangAndValidate(t *testing.T) {
	mixed := pods("g", 2, true, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2"}, nil)
	mixed[1] = pod("g-1", 4, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2", wellknown.RankLabel: "1"}, nil)
	twice := pods("g", 2, false, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2", wellknown.RankLabel: "0"}, nil)
	dpOff := pods("g", 2, true, map[string]string{wellknown.GangLabel: "g", wellknown.PPLabel: "2"}, nil)
	// A launcher (1 GPU) at rank 2 among four 8-GPU workers, DP 2 x PP 2: the workers are one role, wherever
	// their ranks.
	interleaved := pods("g", 5, true, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "5", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, nil)
	interleaved[2] = pod("g-2", 1, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "5", wellknown.DPLabel: "2", wellknown.PPLabel: "2", wellknown.RankLabel: "2"}, nil)
	threeWorkers := pods("g", 4, true, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "4", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, nil)
	threeWorkers[0] = pod("g-0", 1, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "4", wellknown.DPLabel: "2", wellknown.PPLabel: "2", wellknown.RankLabel: "0"}, nil)
	dpOff[0].Labels[wellknown.DPLabel], dpOff[1].Labels[wellknown.DPLabel] = "1", "2"
	koord := map[string]string{wellknown.KoordinatorGangName: "g", wellknown.KoordinatorMinAvailable: "4",
		wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"SpineLayer","strategy":"PreferGather"},{"layer":"BlockLayer","strategy":"MustGather"}]}`}
	for _, tc := range []struct {
		name     string
		form     Form
		pods     []*corev1.Pod
		pg       *unstructured.Unstructured
		min      int
		dp, pp   int
		must     []string
		hard     int
		fault    string // from newGang or Validate
		rankPods []string
		roles    []int // pods per role, when the pods request different resources
	}{
		{name: "labels, size from DP x PP", form: FormLabels, pods: pods("g", 4, true, map[string]string{wellknown.GangLabel: "g", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, nil),
			min: 4, dp: 2, pp: 2, rankPods: []string{"g-0", "g-1", "g-2", "g-3"}},
		{name: "labels, size label", form: FormLabels, pods: pods("g", 3, false, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "3"}, nil), min: 3},
		{name: "labels, no size", form: FormLabels, pods: pods("g", 2, false, map[string]string{wellknown.GangLabel: "g"}, nil), fault: "size is unknown"},
		{name: "podgroup", form: FormPodGroup, pods: pods("g", 2, false, map[string]string{wellknown.PodGroupLabel: "g"}, nil), pg: podGroupObj(2, nil), min: 2},
		{name: "podgroup with Koordinator spec", form: FormPodGroup, pods: pods("g", 2, false, map[string]string{wellknown.PodGroupLabel: "g"}, nil),
			pg: podGroupObj(2, map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"leaf","strategy":"MustGather"}]}`}), min: 2, must: []string{"leaf"}},
		{name: "podgroup missing", form: FormPodGroup, pods: pods("g", 2, false, map[string]string{wellknown.PodGroupLabel: "g"}, nil), fault: "does not exist"},
		{name: "podgroup minMember 0", form: FormPodGroup, pods: pods("g", 2, false, map[string]string{wellknown.PodGroupLabel: "g"}, nil), pg: podGroupObj(0, nil), fault: "minMember 0"},
		{name: "koordinator", form: FormKoordinator, pods: pods("g", 4, false, nil, koord), min: 4, must: []string{"BlockLayer"}},
		{name: "koordinator bad strategy", form: FormKoordinator, pods: pods("g", 4, false, nil, merge(koord, map[string]string{wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"x","strategy":"Maybe"}]}`})), fault: "want MustGather or PreferGather"},
		{name: "volcano hard tier", form: FormVolcano, pods: pods("g", 2, false, nil, map[string]string{wellknown.VolcanoGroupAnnotation: "g"}),
			pg: volcanoObj(map[string]any{"minMember": int64(2), "networkTopology": map[string]any{"mode": "hard", "highestTierAllowed": int64(2)}}), min: 2, hard: 2},
		{name: "volcano soft", form: FormVolcano, pods: pods("g", 2, false, nil, map[string]string{wellknown.VolcanoGroupAnnotation: "g"}),
			pg: volcanoObj(map[string]any{"minMember": int64(2), "networkTopology": map[string]any{"mode": "soft"}}), min: 2},
		{name: "volcano hard without a tier", form: FormVolcano, pods: pods("g", 2, false, nil, map[string]string{wellknown.VolcanoGroupAnnotation: "g"}),
			pg: volcanoObj(map[string]any{"minMember": int64(2), "networkTopology": map[string]any{"mode": "hard"}}), fault: "without highestTierAllowed"},
		{name: "volcano missing", form: FormVolcano, pods: pods("g", 2, false, nil, map[string]string{wellknown.VolcanoGroupAnnotation: "g"}), fault: "does not exist"},
		{name: "DP x PP against minMember", form: FormPodGroup, pods: pods("g", 2, false, map[string]string{wellknown.PodGroupLabel: "g", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, nil), pg: podGroupObj(2, nil), fault: "DP x PP = 2 x 2 = 4, but minMember is 2"},
		{name: "DP disagrees", form: FormLabels, pods: dpOff, fault: "disagree on " + wellknown.DPLabel},
		{name: "rank twice", form: FormLabels, pods: twice, min: 2, fault: "rank 0 is given twice"},
		{name: "rank out of range", form: FormLabels, pods: pods("g", 2, false, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2", wellknown.RankLabel: "5"}, nil), min: 2, fault: "has rank \"5\""},
		{name: "different requests make roles", form: FormLabels, pods: mixed, min: 2, roles: []int{1, 1}},
		{name: "pods with one request form a role wherever their ranks", form: FormLabels, pods: interleaved, min: 5, dp: 2, pp: 2, roles: []int{4, 1}},
		{name: "DP x PP against the largest role", form: FormLabels, pods: threeWorkers, min: 4, fault: "DP x PP = 2 x 2 = 4, but the largest role (pods like g-1) has 3 pods"},
		{name: "one request, no roles", form: FormLabels, pods: pods("g", 3, true, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "3"}, nil), min: 3},
		{name: "ranks reorder pods", form: FormLabels, min: 2, rankPods: []string{"b", "a"}, pods: []*corev1.Pod{
			pod("a", 8, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2", wellknown.RankLabel: "1"}, nil),
			pod("b", 8, map[string]string{wellknown.GangLabel: "g", wellknown.SizeLabel: "2", wellknown.RankLabel: "0"}, nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := newGang("ns/g", tc.form, tc.pods, tc.pg)
			if err == nil {
				err = g.Validate()
			}
			var fe *FaultError
			switch {
			case tc.fault != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.fault)):
				t.Fatalf("error %v; want a fault containing %q", err, tc.fault)
			case tc.fault != "":
				return
			case err != nil:
				t.Fatal(err)
			}
			if g.MinMember != tc.min || g.DP != tc.dp && tc.dp != 0 || g.PP != tc.pp && tc.pp != 0 || !slices.Equal(g.MustLayers, tc.must) || g.HardTier != tc.hard {
				t.Errorf("gang %+v; want minMember %d, DP %d, PP %d, must %v", g, tc.min, tc.dp, tc.pp, tc.must)
			}
			var roles []int
			for _, r := range g.Roles {
				roles = append(roles, r.Pods)
			}
			if !slices.Equal(roles, tc.roles) || (len(g.Roles) == 0) != (len(g.Request) > 0) {
				t.Errorf("roles %v (request %v), want pods per role %v, and a request exactly when there are no roles", roles, g.Request, tc.roles)
			}
			if tc.rankPods != nil {
				var got []string
				for _, p := range g.Pods {
					got = append(got, p.Name)
				}
				if !slices.Equal(got, tc.rankPods) {
					t.Errorf("rank order %v, want %v", got, tc.rankPods)
				}
			}
		})
	}
}

func TestTaintValue(t *testing.T) {
	for _, tc := range []struct{ gang, want string }{
		{"ns/g", "ns_g"},
		{"team-a/" + strings.Repeat("x", 80), ""},
	} {
		got := TaintValue(tc.gang)
		if len(got) > 63 || tc.want != "" && got != tc.want || got != TaintValue(tc.gang) {
			t.Errorf("TaintValue(%q) = %q (len %d), want %q, at most 63, stable", tc.gang, got, len(got), tc.want)
		}
	}
}
