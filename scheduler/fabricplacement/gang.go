package fabricplacement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// HighestTierAnnotation on a PodGroup names the highest tier that may hold the whole gang, by the tier's name
// in the tree (leaf, spine, accelerator, …) or its number (1 is the closest): a hard limit, as Volcano's
// highestTierAllowed. Without it the PodGroup's topology key, when it is one of fabricmap's label keys, is the
// limit; with neither the gang may span any tier (lower tiers are preferred all the same). The name's one home
// is package wellknown, which `fabricmap get tiers` prints it from.
const HighestTierAnnotation = wellknown.HighestTierAnnotation

// gangOf is the placement request of the PodGroup pg for its unscheduled pods: one pod each, the largest
// request among them, DP and PP from the PodGroup's (or else the first pod's) fabricmap.io/dp and
// fabricmap.io/pp labels or annotations, and the hard tier limit (HighestTierAnnotation, else the topology
// key). An error says what in the PodGroup is wrong.
func gangOf(pg *schedulingv1alpha2.PodGroup, pods []*corev1.Pod, lt *labelTree) (placement.Gang, error) {
	g := placement.Gang{Name: pg.Namespace + "/" + pg.Name, Pods: len(pods), Request: placement.Resources{}}
	for _, p := range pods {
		for k, v := range podread.Request(p) {
			g.Request[k] = max(g.Request[k], v)
		}
	}
	var err error
	if g.DP, err = degree(pg, pods, wellknown.DPLabel); err != nil {
		return g, err
	}
	if g.PP, err = degree(pg, pods, wellknown.PPLabel); err != nil {
		return g, err
	}
	switch name, ok := pg.Annotations[HighestTierAnnotation]; {
	case ok:
		if n, err := strconv.Atoi(name); err == nil {
			if !slices.Contains(lt.tiers(), n) {
				return g, fmt.Errorf("annotation %s=%q: the tree has no tier %d (tiers %v)", HighestTierAnnotation, name, n, lt.tiers())
			}
			g.HardTier = n
		} else {
			g.HardTierName = name // placement checks it names a tier of the tree
		}
	case pg.Spec.SchedulingConstraints != nil && len(pg.Spec.SchedulingConstraints.Topology) > 0:
		key := pg.Spec.SchedulingConstraints.Topology[0].Key
		tier, ok := lt.keyTier[key]
		if !ok {
			return g, fmt.Errorf("spec.schedulingConstraints.topology[0].key %q is none of fabricmap's topology label keys on these nodes (%v)",
				key, slices.Sorted(maps.Keys(lt.keyTier)))
		}
		g.HardTier = tier
	}
	return g, nil
}

// degree reads the DP or PP degree (key: wellknown.DPLabel or PPLabel) from the PodGroup's labels or
// annotations, else from the first pod's labels; 0 when none gives it.
func degree(pg *schedulingv1alpha2.PodGroup, pods []*corev1.Pod, key string) (int, error) {
	v, where := pg.Labels[key], "PodGroup label"
	if v == "" {
		v, where = pg.Annotations[key], "PodGroup annotation"
	}
	if v == "" && len(pods) > 0 {
		v, where = pods[0].Labels[key], "pod label"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s %s=%q: want a positive whole number", where, key, v)
	}
	return n, nil
}

// heldByPlacer says whether the pod carries fabricmap-placer's scheduling gate (wellknown.Gate).
func heldByPlacer(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == wellknown.Gate })
}
