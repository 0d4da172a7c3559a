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
		if i, ok := s.nodeIndex[n]; ok && !seen[n] {
			ni := s.infos[i]
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
	sum := make(map[string]int, len(s.domains))
	var out []domainNodes
	for _, d := range s.domains { // children before parents
		n := 0
		for _, node := range d.Nodes {
			n += slots[s.nodeIndex[node]]
		}
		for _, c := range d.Children {
			n += sum[c]
		}
		sum[d.Name] = n
		if d.Tier >= from && (top == 0 || d.Tier <= top) && n >= g.Pods {
			out = append(out, domainNodes{Name: d.Name, tier: d.Tier, slots: n})
		}
	}
	slices.SortStableFunc(out, func(a, b domainNodes) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.slots, b.slots), cmp.Compare(a.Name, b.Name))
	})
	out = out[:min(len(out), limit)]
	for i := range out {
		out[i].nodes = s.domainNodes(out[i].Name)
	}
	return out
}

// domainNodes lists the nodes of the domain named, depth first.
func (s *snapshot) domainNodes(name string) []string {
	d := s.domainByName[name]
	out := slices.Clone(d.Nodes)
	for _, c := range d.Children {
		out = append(out, s.domainNodes(c)...)
	}
	return out
}
