package podread

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod is a pod named name with labels and annotations given as key, value pairs (annotations after "|").
func pod(name string, kv ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
	into := p.Labels
	for i := 0; i < len(kv); i += 2 {
		if kv[i] == "|" {
			into, i = p.Annotations, i-1
			continue
		}
		into[kv[i]] = kv[i+1]
	}
	return p
}

const index = "batch.kubernetes.io/job-completion-index"

func TestRankOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pods    []*corev1.Pod
		want    []string
		wantErr bool
	}{
		{name: "names with numbers sort as numbers",
			pods: []*corev1.Pod{pod("w-10"), pod("w-2"), pod("w-1"), pod("w-0")},
			want: []string{"w-0", "w-1", "w-2", "w-10"}},
		{name: "Job completion index label wins over names",
			pods: []*corev1.Pod{pod("job-0-abc", index, "1"), pod("job-1-aaa", index, "0"), pod("job-10-x", index, "10"), pod("job-2-z", index, "2")},
			want: []string{"job-1-aaa", "job-0-abc", "job-2-z", "job-10-x"}},
		{name: "Job completion index annotation",
			pods: []*corev1.Pod{pod("b", "|", index, "0"), pod("a", "|", index, "1")},
			want: []string{"b", "a"}},
		{name: "an index given twice falls back to names",
			pods: []*corev1.Pod{pod("w-1", index, "0"), pod("w-0", index, "0")},
			want: []string{"w-0", "w-1"}},
		{name: "rank label wins over the completion index",
			pods: []*corev1.Pod{pod("a", "fabricmap.io/rank", "1", index, "0"), pod("b", "fabricmap.io/rank", "0", index, "1")},
			want: []string{"b", "a"}},
		{name: "some ranked, some not", pods: []*corev1.Pod{pod("a", "fabricmap.io/rank", "0"), pod("b")}, wantErr: true},
		{name: "rank out of range", pods: []*corev1.Pod{pod("a", "fabricmap.io/rank", "2"), pod("b", "fabricmap.io/rank", "0")}, wantErr: true},
		{name: "rank twice", pods: []*corev1.Pod{pod("a", "fabricmap.io/rank", "0"), pod("b", "fabricmap.io/rank", "0")}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RankOrder(tc.pods)
			if (err != nil) != tc.wantErr {
				t.Fatalf("RankOrder: error %v, want error %v", err, tc.wantErr)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("RankOrder (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareNames(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"w-2", "w-10", -1},
		{"w-10", "w-2", 1},
		{"w-2", "w-2", 0},
		{"w-02", "w-2", 1},
		{"a", "b", -1},
		{"w-9-b", "w-9-a", 1},
		{"w", "w-1", -1},
		{"pod-1-x", "pod-1", 1},
	} {
		if got := CompareNames(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareNames(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestRequest(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": mustQ("1500m"), "nvidia.com/gpu": mustQ("4")}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": mustQ("500m"), "nvidia.com/gpu": mustQ("4")}}},
		},
		InitContainers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": mustQ("3"), "memory": mustQ("1Gi")}}},
		},
	}}
	want := map[string]int64{"pods": 1, "cpu": 3000, "nvidia.com/gpu": 8, "memory": 1 << 30}
	if diff := cmp.Diff(want, map[string]int64(Request(p))); diff != "" {
		t.Errorf("Request (-want +got):\n%s", diff)
	}
}
