package hypernodegen

import (
	"fmt"
	"sort"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
)

// TreeFromHyperNodes rebuilds a topology tree from HyperNodes, whoever made them: the inverse of HyperNodes, for
// viewers and for placement. Members selected by exact name are resolved; regex and label members cannot be
// resolved without the node list and are returned as warnings. The tree is not validated: the caller decides.
func TreeFromHyperNodes(hns []topologyv1alpha1.HyperNode) (*topology.Tree, []string) {
	t := topology.NewTree()
	var warnings []string
	for i := range hns {
		hn := &hns[i]
		d := &topology.Domain{Name: hn.Name, Tier: hn.Spec.Tier, TierName: hn.Spec.TierName, Source: hn.Labels[SourceLabel]}
		for _, m := range hn.Spec.Members {
			if m.Selector.ExactMatch == nil {
				warnings = append(warnings, fmt.Sprintf("HyperNode %q: a %s member selected by regex or label is not shown", hn.Name, m.Type))
				continue
			}
			switch m.Type {
			case topologyv1alpha1.MemberTypeHyperNode:
				d.Children = append(d.Children, m.Selector.ExactMatch.Name)
			default:
				d.Nodes = append(d.Nodes, m.Selector.ExactMatch.Name)
			}
		}
		sort.Strings(d.Children)
		sort.Strings(d.Nodes)
		if err := t.Add(d); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	for _, d := range t.Domains {
		for _, c := range d.Children {
			child, ok := t.Domains[c]
			switch {
			case !ok:
				warnings = append(warnings, fmt.Sprintf("HyperNode %q lists member HyperNode %q, which does not exist", d.Name, c))
			case child.Parent != "" && child.Parent != d.Name:
				warnings = append(warnings, fmt.Sprintf("HyperNode %q is a member of both %q and %q", c, child.Parent, d.Name))
			default:
				child.Parent = d.Name
			}
		}
	}
	sort.Strings(warnings)
	return t, warnings
}
