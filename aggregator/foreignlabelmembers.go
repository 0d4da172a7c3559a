package aggregator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

// liveLabelMembers returns foreign with each Node member that selects by a label key the Node cache does not
// keep (nodeCacheKeys) replaced by exact members: the Nodes the API server selects with it, listed live
// (metadata only, page by page). The cache keeps only the keys fabricmap reads, so another writer's HyperNodes
// that select by other keys (a rack label, the hostname) would otherwise select nothing, and
// noteForeignHyperNodes would miss them. Members it can read from the cache, or whose selector does not parse,
// stay as they are. foreign is not changed: the HyperNodes changed are copies.
func (gs *guardStage) liveLabelMembers(ctx context.Context, foreign []topologyv1alpha1.HyperNode) ([]topologyv1alpha1.HyperNode, error) {
	out := make([]topologyv1alpha1.HyperNode, 0, len(foreign))
	selected := map[string][]string{} // selector → the Nodes it selects: one list per selector a pass
	for _, hn := range foreign {
		var members []topologyv1alpha1.MemberSpec
		changed := false
		for _, m := range hn.Spec.Members {
			sel := m.Selector.LabelMatch
			if m.Type != topologyv1alpha1.MemberTypeNode || sel == nil || gs.cachedSelector(sel) {
				members = append(members, m)
				continue
			}
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				members = append(members, m) // picks nothing, as hypernodegen.ForeignHyperNodes reads it
				continue
			}
			names, ok := selected[s.String()]
			if !ok {
				if names, err = gs.liveNodeNames(ctx, s.String(), client.MatchingLabelsSelector{Selector: s}); err != nil {
					return nil, fmt.Errorf("reading the Nodes HyperNode %q selects: %w", hn.Name, err)
				}
				selected[s.String()] = names
			}
			for _, n := range names {
				members = append(members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
					Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}})
			}
			changed = true
		}
		if changed {
			hn.Spec.Members = members
		}
		out = append(out, hn)
	}
	return out, nil
}

// cachedSelector reports whether every label key sel reads is one the Node cache keeps.
func (gs *guardStage) cachedSelector(sel *metav1.LabelSelector) bool {
	for k := range sel.MatchLabels {
		if !gs.r.nodeKeys.keeps(k) {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		if !gs.r.nodeKeys.keeps(e.Key) {
			return false
		}
	}
	return true
}

// liveNodeNames lists the names of the Nodes selector selects, straight from the API server, page by page.
func (gs *guardStage) liveNodeNames(ctx context.Context, selector string, sel client.ListOption) ([]string, error) {
	var names []string
	opts := []client.ListOption{sel, client.Limit(nodeListPage)}
	for {
		var page metav1.PartialObjectMetadataList
		page.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := gs.r.Live.List(ctx, &page, opts...); err != nil {
			return nil, fmt.Errorf("listing the Nodes of selector %q: %w", selector, err)
		}
		for _, n := range page.Items {
			names = append(names, n.Name)
		}
		if page.Continue == "" {
			return names, nil
		}
		opts = []client.ListOption{sel, client.Limit(nodeListPage), client.Continue(page.Continue)}
	}
}
