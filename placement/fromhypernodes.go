package placement

import (
	"fmt"
	"slices"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// TreeFromHyperNodes builds a tree from Volcano HyperNodes, strictly: unlike a viewer, placement cannot guess,
// so a member selected by regex or label is resolved against nodeLabels (node name → labels; the cluster's
// nodes; nil when every member is selected by name), and a node or HyperNode claimed by two HyperNodes, an
// unknown member HyperNode, a selector that cannot be read or cannot be resolved is an error naming the
// HyperNode's field.
func TreeFromHyperNodes(hns []topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string) (*topology.Tree, error) {
	t := topology.NewTree()
	names := make([]string, 0, len(nodeLabels))
	for n := range nodeLabels {
		names = append(names, n)
	}
	slices.Sort(names)
	for i := range hns {
		hn := &hns[i]
		d := &topology.Domain{Name: hn.Name, Tier: hn.Spec.Tier, TierName: hn.Spec.TierName}
		if err := t.Add(d); err != nil {
			return nil, inputErr("hyperNodes["+hn.Name+"]", "%v", err)
		}
	}
	for i := range hns {
		hn := &hns[i]
		d := t.Domains[hn.Name]
		for j, m := range hn.Spec.Members {
			field := fmt.Sprintf("hyperNodes[%s].spec.members[%d]", hn.Name, j)
			if m.Type == topologyv1alpha1.MemberTypeHyperNode {
				children, err := selectNames(field, m.Selector, hyperNodeNames(hns), nil)
				if err != nil {
					return nil, err
				}
				for _, c := range children {
					child, ok := t.Domains[c]
					switch {
					case !ok:
						return nil, inputErr(field, "HyperNode %q does not exist", c)
					case child.Parent != "" && child.Parent != hn.Name:
						return nil, inputErr(field, "HyperNode %q is a member of both %q and %q", c, child.Parent, hn.Name)
					}
					child.Parent = hn.Name
					d.Children = append(d.Children, c)
				}
				continue
			}
			if nodeLabels == nil && m.Selector.ExactMatch == nil {
				return nil, inputErr(field+".selector", "selects nodes by regex or label: the nodes (names and labels) are needed to resolve it")
			}
			nodes, err := selectNames(field, m.Selector, names, nodeLabels)
			if err != nil {
				return nil, err
			}
			d.Nodes = append(d.Nodes, nodes...)
		}
		slices.Sort(d.Children)
		d.Children = slices.Compact(d.Children)
		slices.Sort(d.Nodes)
		d.Nodes = slices.Compact(d.Nodes)
	}
	return t, nil
}

// hyperNodeNames returns the HyperNodes' names, sorted.
func hyperNodeNames(hns []topologyv1alpha1.HyperNode) []string {
	out := make([]string, len(hns))
	for i := range hns {
		out[i] = hns[i].Name
	}
	slices.Sort(out)
	return out
}

// selectNames resolves a member selector against candidate names (and their labels, for a label selector).
func selectNames(field string, sel topologyv1alpha1.MemberSelector, candidates []string, lbls map[string]map[string]string) ([]string, error) {
	if sel.ExactMatch != nil {
		return []string{sel.ExactMatch.Name}, nil
	}
	if sel.LabelMatch != nil && lbls == nil {
		return nil, inputErr(field+".selector.labelMatch", "a label selector can only select nodes")
	}
	match, err := hypernodegen.MemberMatcher(sel)
	if err != nil {
		return nil, inputErr(field+".selector", "%v", err)
	}
	var out []string
	for _, c := range candidates {
		if match(c, lbls[c]) {
			out = append(out, c)
		}
	}
	return out, nil
}
