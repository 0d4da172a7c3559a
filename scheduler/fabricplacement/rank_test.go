package fabricplacement

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

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
