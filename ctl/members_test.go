package ctl

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
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

func TestResolveMembers(t *testing.T) {
	nodes := map[string]map[string]string{
		"gpu-a1": {"block": "leaf-a"}, "gpu-a2": {"block": "leaf-a"}, "gpu-b1": {"block": "leaf-b"}, "cpu-1": {},
	}
	for _, tc := range []struct {
		name   string
		member topologyv1alpha1.MemberSpec
		want   string
	}{
		{"exact stays", exact(topologyv1alpha1.MemberTypeNode, "gpu-a1"), "gpu-a1"},
		{"regex", regex("^(?:gpu-a1|gpu-a2)$"), "gpu-a1,gpu-a2"},
		{"label", label("block", "leaf-b"), "gpu-b1"},
		{"label matching nothing", label("block", "leaf-z"), ""},
		{"bad regex left alone", regex("("), "("},
		{"child HyperNode stays", exact(topologyv1alpha1.MemberTypeHyperNode, "leaf-a"), "leaf-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []topologyv1alpha1.HyperNode{hyperNode("leaf", 1, tc.member)}
			if !needsNodes(in) && tc.member.Selector.ExactMatch == nil {
				t.Fatal("needsNodes says no for a non-exact member")
			}
			out := resolveMembers(in, nodes)
			var got []string
			for _, m := range out[0].Spec.Members {
				switch {
				case m.Selector.ExactMatch != nil:
					got = append(got, m.Selector.ExactMatch.Name)
				case m.Selector.RegexMatch != nil:
					got = append(got, m.Selector.RegexMatch.Pattern)
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("members %v, want %s", got, tc.want)
			}
			if in[0].Spec.Members[0].Selector != tc.member.Selector {
				t.Error("the input HyperNode was modified")
			}
		})
	}
}
