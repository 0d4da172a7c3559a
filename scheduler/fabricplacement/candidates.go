package fabricplacement

import (
	"cmp"
	"slices"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/placement"
)

// domainNodes is a candidate domain and its nodes.
type domainNodes struct {
	Name  string
	tier  int
	slots int
	nodes []string
}

// nodeInfos returns the scheduler's NodeInfo of each named node once, in order.
func (s *snapshot) nodeInfos(names []string) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if ni, ok := s.infos[n]; ok && !seen[n] {
			seen[n] = true
			out = append(out, ni)
		}
	}
	return out
}

// fallbacks returns up to limit whole domains, from tier from up to the gang's hard limit, whose nodes have
// free room for all of the gang's pods: lowest tier first, then the tightest fit (fewest free slots), then by
// name.
func (s *snapshot) fallbacks(g placement.Gang, from, limit int) []domainNodes {
	top := g.HardTier
	if g.HardTierName != "" {
		top, _ = s.fabric.TierByName(g.HardTierName)
	}
	slots := s.cluster.Slots(g.PodRequest())
	byDomain := map[string]*domainNodes{}
	for i, n := range s.fabric.Nodes() {
		for _, d := range s.fabric.NodeDomains(n) {
			dn := byDomain[d]
			if dn == nil {
				dn = &domainNodes{Name: d}
				byDomain[d] = dn
			}
			dn.slots += slots[i]
			dn.nodes = append(dn.nodes, n)
		}
	}
	var out []domainNodes
	for _, d := range s.fabric.Domains() {
		dn := byDomain[d.Name]
		if dn == nil || d.Tier < from || (top > 0 && d.Tier > top) || dn.slots < g.Pods {
			continue
		}
		dn.tier = d.Tier
		out = append(out, *dn)
	}
	slices.SortStableFunc(out, func(a, b domainNodes) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.slots, b.slots), cmp.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), limit)]
}
