package treeread

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TreeFromHyperNodes builds a tree from Volcano HyperNodes, strictly, as placement needs it: a member selected
// by regex or label is resolved against nodeLabels (node name → labels: the cluster's nodes; nil when every
// node member is selected by name), and a node or HyperNode claimed by two HyperNodes, an unknown member
// HyperNode, a selector that cannot be read or cannot be resolved, or a degraded-uplinks annotation
// (wellknown.DegradedUplinksAnnotation, read into Domain.DegradedUplinks) that is no count is a
// *placement.InputError naming the HyperNode's field.
func TreeFromHyperNodes(hns []topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string) (*topology.Tree, error) {
	t, problems := readHyperNodes(hns, nodeLabels)
	if len(problems) > 0 {
		return nil, problems[0].err
	}
	return t, nil
}

// ViewHyperNodes builds a tree from HyperNodes, whoever made them, for viewers: it never fails. Node members
// selected by regex or label are resolved against nodeLabels (as Volcano resolves them); with nodeLabels nil
// they are left out. What TreeFromHyperNodes refuses (and members left out) is returned as sorted warnings
// instead; the tree is not validated, the caller decides.
func ViewHyperNodes(hns []topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string) (*topology.Tree, []string) {
	t, problems := readHyperNodes(hns, nodeLabels)
	warnings := make([]string, len(problems))
	for i, p := range problems {
		warnings[i] = p.warning
	}
	slices.Sort(warnings)
	return t, warnings
}

// NeedsNodeLabels reports whether a HyperNode selects nodes by regular expression or label, which only the
// nodes' names and labels resolve.
func NeedsNodeLabels(hns []topologyv1alpha1.HyperNode) bool {
	for _, hn := range hns {
		for _, m := range hn.Spec.Members {
			if m.Type != topologyv1alpha1.MemberTypeHyperNode && m.Selector.ExactMatch == nil {
				return true
			}
		}
	}
	return false
}

// problem is one thing wrong with the HyperNodes: err for the strict reader, warning for viewers.
type problem struct {
	err     error
	warning string
}

// readHyperNodes is the one reading of HyperNodes: it builds the tree from what it can read and returns the
// problems, in the HyperNodes' order. A HyperNode named twice is read once; a member HyperNode that does not
// exist or that already has another parent is still listed as a child (a viewer shows it), without a parent.
func readHyperNodes(hns []topologyv1alpha1.HyperNode, nodeLabels map[string]map[string]string) (*topology.Tree, []problem) {
	var problems []problem
	bad := func(field, warning, format string, args ...any) {
		problems = append(problems, problem{err: inputErr(field, format, args...), warning: warning})
	}
	t := topology.NewTree()
	nodeNames := slices.Sorted(maps.Keys(nodeLabels))
	hnNames := make([]string, len(hns))
	dup := make([]bool, len(hns))
	for i := range hns {
		hn := &hns[i]
		hnNames[i] = hn.Name
		d := &topology.Domain{Name: hn.Name, Tier: hn.Spec.Tier, TierName: hn.Spec.TierName, Source: hn.Labels[wellknown.SourceLabel]}
		d.NVLinkDomain = hn.Annotations[wellknown.NVLinkDomainAnnotation]
		d.NVLinkSubDomain = hn.Annotations[wellknown.NVLinkSubDomainAnnotation]
		d.NVLinkPart = hn.Annotations[wellknown.NVLinkPartAnnotation] == "true"
		if sw := hn.Annotations[wellknown.SwitchesAnnotation]; sw != "" {
			d.Switches = strings.Split(sw, ",")
			slices.Sort(d.Switches)
		}
		if v, ok := hn.Annotations[wellknown.DegradedUplinksAnnotation]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				key := wellknown.DegradedUplinksAnnotation
				bad("hyperNodes["+hn.Name+"].metadata.annotations["+key+"]",
					fmt.Sprintf("HyperNode %q: annotation %s=%q is not a count of uplinks; read as none", hn.Name, key, v),
					"%q is not a count of uplinks (want a decimal number, 0 or more)", v)
			} else {
				d.DegradedUplinks = n
			}
		}
		if err := t.Add(d); err != nil {
			bad("hyperNodes["+hn.Name+"]", err.Error(), "%v", err)
			dup[i] = true
		}
	}
	slices.Sort(hnNames)
	for i := range hns {
		hn := &hns[i]
		d := t.Domains[hn.Name]
		if dup[i] {
			continue // the second of two HyperNodes of one name (or one without a name)
		}
		for j, m := range hn.Spec.Members {
			field := fmt.Sprintf("hyperNodes[%s].spec.members[%d]", hn.Name, j)
			notShown := fmt.Sprintf("HyperNode %q: a %s member selected by regex or label is not shown", hn.Name, m.Type)
			if m.Type == topologyv1alpha1.MemberTypeHyperNode {
				children, err := selectNames(field, m.Selector, hnNames, nil)
				if err != nil {
					problems = append(problems, problem{err: err, warning: notShown})
					continue
				}
				for _, c := range children {
					d.Children = append(d.Children, c)
					child, ok := t.Domains[c]
					switch {
					case !ok:
						bad(field, fmt.Sprintf("HyperNode %q lists member HyperNode %q, which does not exist", hn.Name, c),
							"HyperNode %q does not exist", c)
					case child.Parent != "" && child.Parent != hn.Name:
						bad(field, fmt.Sprintf("HyperNode %q is a member of both %q and %q", c, child.Parent, hn.Name),
							"HyperNode %q is a member of both %q and %q", c, child.Parent, hn.Name)
					default:
						child.Parent = hn.Name
					}
				}
				continue
			}
			if nodeLabels == nil && m.Selector.ExactMatch == nil {
				bad(field+".selector", notShown, "selects nodes by regex or label: the nodes (names and labels) are needed to resolve it")
				continue
			}
			nodes, err := selectNames(field, m.Selector, nodeNames, nodeLabels)
			if err != nil {
				problems = append(problems, problem{err: err, warning: notShown + ": " + err.Error()})
				continue
			}
			d.Nodes = append(d.Nodes, nodes...)
		}
		slices.Sort(d.Children)
		d.Children = slices.Compact(d.Children)
		slices.Sort(d.Nodes)
		d.Nodes = slices.Compact(d.Nodes)
	}
	return t, problems
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
