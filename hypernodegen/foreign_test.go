package hypernodegen

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/health"
)

// hn is a HyperNode of tier with members of type typ, each selected by sel; owned marks it fabricmap's.
func hn(name string, tier int, owned bool, typ topologyv1alpha1.MemberType, sels ...topologyv1alpha1.MemberSelector) topologyv1alpha1.HyperNode {
	h := topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier}}
	if owned {
		h.Labels = OwnedSelector()
	}
	for _, s := range sels {
		h.Spec.Members = append(h.Spec.Members, topologyv1alpha1.MemberSpec{Type: typ, Selector: s})
	}
	return h
}

func exact(n string) topologyv1alpha1.MemberSelector {
	return topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}
}

func TestForeignHyperNodes(t *testing.T) {
	node, hyper := topologyv1alpha1.MemberTypeNode, topologyv1alpha1.MemberTypeHyperNode
	placed := map[string]bool{"n1": true, "n2": true, "n3": true}
	labels := map[string]map[string]string{"n1": {"rack": "r1"}, "n2": {"rack": "r1"}, "n3": {"rack": "r2"}}
	ours := []topologyv1alpha1.HyperNode{hn("sw-leaf-a", 1, true, node, exact("n1"), exact("n2")), hn("fabric", 2, true, hyper, exact("sw-leaf-a"))}
	for _, tc := range []struct {
		name   string
		others []topologyv1alpha1.HyperNode
		want   []ForeignHyperNode
	}{
		{name: "none"},
		{name: "Volcano's label discovery over our nodes, and its spine over its leaf",
			others: []topologyv1alpha1.HyperNode{
				hn("leaf-hn-0", 1, false, node, exact("n1"), exact("n2"), exact("elsewhere")),
				hn("spine-hn", 2, false, hyper, exact("leaf-hn-0")),
			},
			want: []ForeignHyperNode{{Name: "leaf-hn-0", Tier: 1, Members: []string{"n1", "n2"}}}},
		{name: "regex and label selectors",
			others: []topologyv1alpha1.HyperNode{
				hn("by-regex", 1, false, node, topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "^n[23]$"}}),
				hn("by-label", 1, false, node, topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}}),
				hn("bad-regex", 1, false, node, topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "("}}),
			},
			want: []ForeignHyperNode{
				{Name: "by-label", Tier: 1, Members: []string{"n1", "n2"}},
				{Name: "by-regex", Tier: 1, Members: []string{"n2", "n3"}},
			}},
		{name: "a parent over our HyperNode",
			others: []topologyv1alpha1.HyperNode{hn("their-spine", 3, false, hyper, exact("sw-leaf-a"))},
			want:   []ForeignHyperNode{{Name: "their-spine", Tier: 3, Members: []string{"sw-leaf-a"}}}},
		{name: "over nodes fabricmap does not place: not ours to report",
			others: []topologyv1alpha1.HyperNode{hn("gpu-rack", 1, false, node, exact("cpu-1"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ForeignHyperNodes(append(append([]topologyv1alpha1.HyperNode(nil), ours...), tc.others...), placed, labels)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ForeignHyperNodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForeignHyperNodeFinding(t *testing.T) {
	f := ForeignHyperNode{Name: "leaf-hn-0", Tier: 1, Members: []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}}
	got := f.Finding()
	if got.Kind != health.KindForeignHyperNode || got.Severity != health.SeverityCritical || got.Domain != "leaf-hn-0" {
		t.Errorf("finding = %+v, want a critical %s on leaf-hn-0", got, health.KindForeignHyperNode)
	}
	for _, want := range []string{"leaf-hn-0 (tier 1; 7 of fabricmap's: n1, n2, n3, n4, n5 and 2 more)", "two parents", "networkTopologyDiscovery", "volcano-controller-configmap"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q does not say %q", got.Message, want)
		}
	}
}
