package fabricplacement

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/wellknown"
)

var _ fwk.ScorePlugin = (*Plugin)(nil)

// rankOrder returns pods in rank order, as the placer reads ranks: by their wellknown.RankLabel (0 … M-1, each
// once) when every pod has one, by name when none has. Some pods with a rank and some without, a rank out of
// range or given twice is an error.
func rankOrder(pods []*corev1.Pod) ([]*corev1.Pod, error) {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	ranked := 0
	for _, p := range out {
		if _, ok := p.Labels[wellknown.RankLabel]; ok {
			ranked++
		}
	}
	switch ranked {
	case 0:
		return out, nil
	case len(out):
	default:
		return nil, fmt.Errorf("%d of %d pods have a %s label: give every pod one or none", ranked, len(out), wellknown.RankLabel)
	}
	byRank := make([]*corev1.Pod, len(out))
	for _, p := range out {
		r, err := strconv.Atoi(p.Labels[wellknown.RankLabel])
		switch {
		case err != nil || r < 0 || r >= len(out):
			return nil, fmt.Errorf("pod %s has rank %q: want 0 … %d", p.Name, p.Labels[wellknown.RankLabel], len(out)-1)
		case byRank[r] != nil:
			return nil, fmt.Errorf("rank %d is given twice (pods %s and %s)", r, byRank[r].Name, p.Name)
		}
		byRank[r] = p
	}
	return byRank, nil
}

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
