package fabricplacement

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
)

var _ fwk.ScorePlugin = (*Plugin)(nil)

// rankNodes maps each pod (in rank order) to the node the plan gives its rank.
func rankNodes(pods []*corev1.Pod, ranks []string) map[types.UID]string {
	out := make(map[types.UID]string, len(pods))
	for i, p := range pods {
		if i < len(ranks) {
			out[p.UID] = ranks[i]
		}
	}
	return out
}

// Score puts a gang's pods in the plan's rank order: in a PodGroup cycle whose placement GeneratePlacements
// planned, a pod scores fwk.MaxScore on the node its rank was planned on and fwk.MinScore elsewhere, so that with
// the profile's weight each pipeline group's consecutive ranks share the domain the plan gave them. Other pods,
// and cycles without a plan, score every node alike.
func (pl *Plugin) Score(_ context.Context, state fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	if !state.IsPodGroupSchedulingCycle() {
		return fwk.MinScore, nil
	}
	v, err := state.GetPodGroupSchedulingCycle().Read(cycleKey)
	if err != nil {
		return fwk.MinScore, nil
	}
	if node, ok := v.(*cycleData).rankNode[pod.UID]; ok && ni.Node() != nil && node == ni.Node().Name {
		return fwk.MaxScore, nil
	}
	return fwk.MinScore, nil
}

// ScoreExtensions returns nil: scores are already within [MinScore, MaxScore].
func (pl *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
