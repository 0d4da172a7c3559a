package hypernodegen

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

func TestMemberMatcher(t *testing.T) {
	block := map[string]string{DefaultTierKeys[0]: "leaf-a"}
	for _, tc := range []struct {
		name   string
		sel    topologyv1alpha1.MemberSelector
		yes    []string // node names (labelled block) that match
		no     []string
		errMsg string
	}{
		{name: "exact", sel: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "gpu-1"}},
			yes: []string{"gpu-1"}, no: []string{"gpu-10", "gpu"}},
		{name: "regex, unanchored as Volcano has it", sel: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "gpu-[0-9]$"}},
			yes: []string{"gpu-1", "rack2-gpu-3"}, no: []string{"gpu-10"}},
		{name: "label", sel: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: block}}, yes: []string{"any"}},
		{name: "bad regex", sel: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "("}}, errMsg: "regexMatch.pattern"},
		{name: "bad label selector", sel: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}},
			errMsg: "labelMatch"},
		{name: "nothing set", errMsg: "none of exactMatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			match, err := MemberMatcher(tc.sel)
			if tc.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("error = %v, want %q", err, tc.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.yes {
				if !match(n, block) {
					t.Errorf("%s does not match", n)
				}
			}
			for _, n := range tc.no {
				if match(n, block) {
					t.Errorf("%s matches", n)
				}
			}
		})
	}
}
