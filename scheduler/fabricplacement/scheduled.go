package fabricplacement

import (
	"fmt"
	"slices"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/placement"
)

// scheduledNodes returns the nodes of the PodGroup's pods the scheduler already placed (assumed or bound): a
// gang partly running whose other pods are placed again (a pod deleted and recreated, say). None without a
// handle (unit tests) or when the scheduler knows no state of the group.
func (pl *Plugin) scheduledNodes(podGroup fwk.PodGroupInfo) []string {
	if pl.handle == nil {
		return nil
	}
	st, err := pl.handle.SnapshotSharedLister().PodGroupStates().Get(podGroup.GetNamespace(), podGroup.GetName())
	if err != nil || st == nil {
		return nil
	}
	var out []string
	for _, p := range st.ScheduledPods() {
		if p.Spec.NodeName != "" && !slices.Contains(out, p.Spec.NodeName) {
			out = append(out, p.Spec.NodeName)
		}
	}
	return out
}

// keepWithin keeps the rest of a gang, whose pods already run on scheduled, in the domain of the gang's
// highest allowed tier that holds them: every node outside it becomes unavailable. Without a hard limit the
// gang may go anywhere, as its first pods could. A gang whose scheduled pods already span more than its limit
// allows, or sit on nodes outside the tree, cannot be completed: an unschedulable status says so.
func (s *snapshot) keepWithin(g placement.Gang, scheduled []string) (*fwk.Status, error) {
	top := g.HardTier
	if g.HardTierName != "" {
		top, _ = s.fabric.TierByName(g.HardTierName)
	}
	if top == 0 {
		return nil, nil
	}
	tier, domain, err := s.fabric.Span(scheduled)
	if err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: the gang's pods already run on %v, not all in the tree: %v", scheduled, err)), nil
	}
	if tier > top {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: the gang's pods already run on %v, across %s (tier %d), above its limit of tier %d",
			scheduled, domain, tier, top)), nil
	}
	within := domain
	for _, d := range s.fabric.NodeDomains(scheduled[0]) {
		if info := s.domainByName[d]; info != nil && info.Tier <= top {
			within = d
		}
	}
	inside := map[string]bool{}
	for _, n := range s.domainNodes(within) {
		inside[n] = true
	}
	var outside []placement.Node
	for _, n := range s.nodes {
		if !n.Unavailable && !inside[n.Name] {
			n.Unavailable = true
			outside = append(outside, n)
		}
	}
	c, _, err := s.cluster.WithNodes(outside)
	if err != nil {
		return nil, fmt.Errorf("marking the %d nodes outside %s unavailable: %w", len(outside), within, err)
	}
	s.cluster = c
	return nil, nil
}
