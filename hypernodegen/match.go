package hypernodegen

import (
	"errors"
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

// MemberMatcher returns the test a HyperNode member selector applies to a candidate member, given its name
// and (for a node) its labels: an exact name, a regular expression on the name (as Volcano matches it:
// anywhere in the name unless anchored) or a label selector. It is the one reading of member selectors that
// the viewers and the placement module share. A selector that sets none, or that does not parse, is an error.
func MemberMatcher(sel topologyv1alpha1.MemberSelector) (func(name string, labels map[string]string) bool, error) {
	switch {
	case sel.ExactMatch != nil:
		want := sel.ExactMatch.Name
		return func(name string, _ map[string]string) bool { return name == want }, nil
	case sel.RegexMatch != nil:
		re, err := regexp.Compile(sel.RegexMatch.Pattern)
		if err != nil {
			return nil, fmt.Errorf("regexMatch.pattern: %w", err)
		}
		return func(name string, _ map[string]string) bool { return re.MatchString(name) }, nil
	case sel.LabelMatch != nil:
		s, err := metav1.LabelSelectorAsSelector(sel.LabelMatch)
		if err != nil {
			return nil, fmt.Errorf("labelMatch: %w", err)
		}
		return func(_ string, l map[string]string) bool { return s.Matches(labels.Set(l)) }, nil
	}
	return nil, errors.New("none of exactMatch, regexMatch, labelMatch is set")
}
