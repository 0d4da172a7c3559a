package fabricplacement

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/fabricmap/fabricmap/wellknown"
)

// TestRankOrder orders pods by rank label or name, and refuses ranks given to some pods only, out of range or
// twice.
func TestRankOrder(t *testing.T) {
	pod := func(name, rank string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if rank != "" {
			p.Labels = map[string]string{wellknown.RankLabel: rank}
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		pods    []*corev1.Pod
		want    []string
		wantErr string
	}{
		{name: "by name", pods: []*corev1.Pod{pod("b", ""), pod("c", ""), pod("a", "")}, want: []string{"a", "b", "c"}},
		{name: "by rank", pods: []*corev1.Pod{pod("a", "2"), pod("b", "0"), pod("c", "1")}, want: []string{"b", "c", "a"}},
		{name: "some ranked", pods: []*corev1.Pod{pod("a", "0"), pod("b", "")}, wantErr: "1 of 2 pods have a fabricmap.io/rank label"},
		{name: "out of range", pods: []*corev1.Pod{pod("a", "0"), pod("b", "2")}, wantErr: `pod b has rank "2": want 0 … 1`},
		{name: "twice", pods: []*corev1.Pod{pod("a", "0"), pod("b", "0")}, wantErr: "rank 0 is given twice (pods a and b)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rankOrder(tc.pods)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("rank order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScore gives a pod of a planned PodGroup cycle the most on its rank's node and the least elsewhere, and
// every node alike outside a PodGroup cycle.
func TestScore(t *testing.T) {
	p0, p1 := gpuPod("g", 0), gpuPod("g", 1)
	group := framework.NewCycleState()
	group.Write(cycleKey, &cycleData{rankNode: rankNodes([]*corev1.Pod{p0, p1}, []string{"n-a", "n-b"})})
	inGroup := framework.NewCycleState()
	inGroup.SetPodGroupSchedulingCycle(group)
	info := func(name string) *framework.NodeInfo {
		ni := framework.NewNodeInfo()
		ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
		return ni
	}
	pl := &Plugin{}
	var got []int64
	for _, c := range []struct {
		state *framework.CycleState
		pod   *corev1.Pod
		node  string
	}{{inGroup, p0, "n-a"}, {inGroup, p0, "n-b"}, {inGroup, p1, "n-b"}, {framework.NewCycleState(), p0, "n-a"}} {
		s, st := pl.Score(context.Background(), c.state, c.pod, info(c.node))
		if !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		got = append(got, s)
	}
	if diff := cmp.Diff([]int64{100, 0, 100, 0}, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}
