package hypernodegen

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
)

// Ways a HyperNode can select its node members (Options.NodeSelector), named after Volcano's member selector
// fields. Child HyperNodes are always named exactly.
const (
	// SelectorExact lists every node by name, one member each (the default).
	SelectorExact = "exactMatch"
	// SelectorRegex selects a domain's nodes with one member whose regular expression matches exactly their
	// names: a short spec for a large leaf.
	SelectorRegex = "regexMatch"
	// SelectorLabel selects a domain's nodes with one member matching the node label fabricmap writes for the
	// domain's tier (LabelKeys); a domain whose tier has no key falls back to exact names.
	SelectorLabel = "labelMatch"
)

// Selectors lists the accepted values of Options.NodeSelector.
var Selectors = []string{SelectorExact, SelectorRegex, SelectorLabel}

// Options tunes HyperNode generation.
type Options struct {
	// NodeSelector is how a domain selects its nodes: SelectorExact (also when empty), SelectorRegex or
	// SelectorLabel.
	NodeSelector string
	// LabelKeys are the node-label keys written alongside the HyperNodes; SelectorLabel needs them.
	LabelKeys LabelKeys
}

// Validate checks the selector and that SelectorLabel has label keys to select by.
func (o Options) Validate() error {
	switch o.NodeSelector {
	case "", SelectorExact, SelectorRegex:
		return nil
	case SelectorLabel:
		if len(o.LabelKeys.All()) == 0 {
			return fmt.Errorf("member selector %s needs node-label keys", SelectorLabel)
		}
		return nil
	}
	return fmt.Errorf("member selector %q is not one of %s", o.NodeSelector, strings.Join(Selectors, ", "))
}

// nodeMembers returns the members that select d's nodes. accelTier is the tier of t's accelerator domains
// (0 when none), as NodeLabels counts it.
func (o Options) nodeMembers(d *topology.Domain, accelTier int) []topologyv1alpha1.MemberSpec {
	if len(d.Nodes) == 0 {
		return nil
	}
	switch o.NodeSelector {
	case SelectorRegex:
		quoted := make([]string, len(d.Nodes))
		for i, n := range d.Nodes {
			quoted[i] = regexp.QuoteMeta(n)
		}
		return []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{
			RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "^(?:" + strings.Join(quoted, "|") + ")$"},
		}}}
	case SelectorLabel:
		if key, value := o.domainLabel(d, accelTier); key != "" {
			return []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{
				LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
			}}}
		}
	}
	members := make([]topologyv1alpha1.MemberSpec, 0, len(d.Nodes))
	for _, n := range d.Nodes {
		members = append(members, member(topologyv1alpha1.MemberTypeNode, n))
	}
	return members
}

// domainLabel returns the node label that NodeLabels puts on exactly d's nodes, or "" when there is none.
func (o Options) domainLabel(d *topology.Domain, accelTier int) (key, value string) {
	if d.TierName == topology.TierNameAcceleratorSubDomain {
		return "", "" // a sub-domain's value (a rack) need not be unique across NVLink domains: exact names
	}
	if d.TierName == topology.TierNameAccelerator {
		if o.LabelKeys.Accelerator == "" || d.NVLinkDomain == "" || d.NVLinkPart {
			return "", "" // a part of an NVLink domain shares its label with the other parts' nodes
		}
		return o.LabelKeys.Accelerator, LabelValue(d.NVLinkDomain)
	}
	i := d.Tier - accelTier - 1
	if i < 0 || i >= len(o.LabelKeys.Tiers) || o.LabelKeys.Tiers[i] == "" {
		return "", ""
	}
	return o.LabelKeys.Tiers[i], d.Name
}
