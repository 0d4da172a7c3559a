package ctl

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// listNodeLabels returns every Node's labels by name, reading only the Nodes' metadata.
func listNodeLabels(ctx context.Context, r client.Reader) (map[string]map[string]string, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(nodeListGVK)
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, n := range list.Items {
		l := n.Labels
		if l == nil {
			l = map[string]string{}
		}
		out[n.Name] = l
	}
	return out, nil
}

// needsNodes reports whether a HyperNode selects nodes by regular expression or label, which only the Node
// list resolves.
func needsNodes(hns []topologyv1alpha1.HyperNode) bool {
	for _, hn := range hns {
		for _, m := range hn.Spec.Members {
			if m.Type == topologyv1alpha1.MemberTypeNode && m.Selector.ExactMatch == nil {
				return true
			}
		}
	}
	return false
}

// resolveMembers returns copies of hns whose node members selected by regular expression or label are
// replaced by one exact member per matching node, as Volcano resolves them. A selector that does not parse
// is left as it is (TreeFromHyperNodes then warns about it).
func resolveMembers(hns []topologyv1alpha1.HyperNode, nodes map[string]map[string]string) []topologyv1alpha1.HyperNode {
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]topologyv1alpha1.HyperNode, len(hns))
	for i, hn := range hns {
		hn = *hn.DeepCopy()
		var members []topologyv1alpha1.MemberSpec
		for _, m := range hn.Spec.Members {
			match, err := hypernodegen.MemberMatcher(m.Selector)
			if m.Type != topologyv1alpha1.MemberTypeNode || m.Selector.ExactMatch != nil || err != nil {
				members = append(members, m)
				continue
			}
			for _, n := range names {
				if match(n, nodes[n]) {
					members = append(members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
						Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}})
				}
			}
		}
		hn.Spec.Members = members
		out[i] = hn
	}
	return out
}
