package ctl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/treeread"
)

func hyperNode(name string, tier int, members ...topologyv1alpha1.MemberSpec) topologyv1alpha1.HyperNode {
	hn := topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"app.kubernetes.io/managed-by": "fabricmap", "fabricmap.io/source": "reports"}}}
	hn.Spec.Tier, hn.Spec.Members = tier, members
	return hn
}

func exact(typ topologyv1alpha1.MemberType, name string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: typ, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}}
}

func regex(pattern string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: pattern}}}
}

func label(key, value string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}}
}

// TestResolveMembers: `fabricmap get` resolves node members selected by regex or label against the Nodes
// (treeread.ViewHyperNodes), shows a member it cannot read as a warning, and leaves the input alone.
func TestResolveMembers(t *testing.T) {
	nodes := map[string]map[string]string{
		"gpu-a1": {"block": "leaf-a"}, "gpu-a2": {"block": "leaf-a"}, "gpu-b1": {"block": "leaf-b"}, "cpu-1": {},
	}
	for _, tc := range []struct {
		name     string
		member   topologyv1alpha1.MemberSpec
		want     []string
		warnings int
	}{
		{"exact stays", exact(topologyv1alpha1.MemberTypeNode, "gpu-a1"), []string{"leaf(1)gpu-a1"}, 0},
		{"regex", regex("^(?:gpu-a1|gpu-a2)$"), []string{"leaf(1)gpu-a1,gpu-a2"}, 0},
		{"label", label("block", "leaf-b"), []string{"leaf(1)gpu-b1"}, 0},
		{"label matching nothing", label("block", "leaf-z"), []string{"leaf(1)"}, 0},
		{"bad regex warned", regex("("), []string{"leaf(1)"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []topologyv1alpha1.HyperNode{hyperNode("leaf", 1, tc.member)}
			if !treeread.NeedsNodeLabels(in) && tc.member.Selector.ExactMatch == nil {
				t.Fatal("NeedsNodeLabels says no for a non-exact member")
			}
			tr, warnings := treeread.ViewHyperNodes(in, nodes)
			if diff := cmp.Diff(tc.want, tr.Outline()); diff != "" {
				t.Errorf("outline (-want +got):\n%s", diff)
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", warnings, tc.warnings)
			}
			if in[0].Spec.Members[0].Selector != tc.member.Selector {
				t.Error("the input HyperNode was modified")
			}
		})
	}
}
