// Package hypernodegen turns fabricmap's topology tree into the objects schedulers read. Everything here is a
// pure function of the tree and options: no clients, no clocks.
package hypernodegen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// OwnedSelector is the label selector that matches every object fabricmap owns.
func OwnedSelector() map[string]string {
	return map[string]string{wellknown.ManagedByLabel: wellknown.ManagedByValue}
}

// HyperNodes returns one HyperNode per domain of t, sorted by name. A domain's members are its child domains
// (type HyperNode, each by exact name) or its nodes (type Node, selected as opts.NodeSelector says); spec.tier and spec.tierName are the domain's,
// so accelerator domains become tier-1 HyperNodes of tierName "accelerator" with node members, below leaves
// with HyperNode members. status.nodeCount holds the number of nodes at or below the domain; the annotations
// SwitchesAnnotation and DegradedUplinksAnnotation its switches and its degraded uplinks. An invalid tree
// yields an error and no objects: fabricmap never writes an invalid HyperNode.
func HyperNodes(t *topology.Tree, opts Options) ([]topologyv1alpha1.HyperNode, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("refusing to generate HyperNodes from an invalid tree: %w", err)
	}
	accelTier := 0
	if opts.NodeSelector == SelectorLabel {
		var err error
		if accelTier, err = acceleratorTier(t); err != nil {
			return nil, fmt.Errorf("member selector %s: %w", SelectorLabel, err)
		}
	}
	names := make([]string, 0, len(t.Domains))
	for n := range t.Domains {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]topologyv1alpha1.HyperNode, 0, len(names))
	for _, n := range names {
		out = append(out, hyperNode(t, t.Domains[n], opts, accelTier))
	}
	return out, nil
}

func hyperNode(t *topology.Tree, d *topology.Domain, opts Options, accelTier int) topologyv1alpha1.HyperNode {
	hn := topologyv1alpha1.HyperNode{
		TypeMeta: metav1.TypeMeta{APIVersion: topologyv1alpha1.SchemeGroupVersion.String(), Kind: "HyperNode"},
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name,
			Labels: map[string]string{
				wellknown.ManagedByLabel: wellknown.ManagedByValue,
				wellknown.TierNameLabel:  topology.SafeName(d.TierName),
			},
		},
		Spec:   topologyv1alpha1.HyperNodeSpec{Tier: d.Tier, TierName: d.TierName},
		Status: topologyv1alpha1.HyperNodeStatus{NodeCount: int64(t.NodeCount(d.Name))},
	}
	if d.Source != "" {
		hn.Labels[wellknown.SourceLabel] = topology.SafeName(d.Source)
	}
	if len(d.Switches) > 0 {
		setAnnotation(&hn, wellknown.SwitchesAnnotation, strings.Join(d.Switches, ","))
	}
	if d.DegradedUplinks > 0 {
		setAnnotation(&hn, wellknown.DegradedUplinksAnnotation, strconv.Itoa(d.DegradedUplinks))
	}
	if d.NVLinkDomain != "" {
		hn.Labels[wellknown.NVLinkDomainLabel] = LabelValue(d.NVLinkDomain)
		setAnnotation(&hn, wellknown.NVLinkDomainAnnotation, d.NVLinkDomain)
		if d.NVLinkSubDomain != "" {
			setAnnotation(&hn, wellknown.NVLinkSubDomainAnnotation, d.NVLinkSubDomain)
		}
		if d.NVLinkPart {
			setAnnotation(&hn, wellknown.NVLinkPartAnnotation, "true")
		}
	}
	for _, c := range d.Children {
		hn.Spec.Members = append(hn.Spec.Members, member(topologyv1alpha1.MemberTypeHyperNode, c))
	}
	hn.Spec.Members = append(hn.Spec.Members, opts.nodeMembers(d, accelTier)...)
	return hn
}

// setAnnotation sets one annotation on hn.
func setAnnotation(hn *topologyv1alpha1.HyperNode, key, value string) {
	if hn.Annotations == nil {
		hn.Annotations = map[string]string{}
	}
	hn.Annotations[key] = value
}

func member(typ topologyv1alpha1.MemberType, name string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{
		Type:     typ,
		Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}},
	}
}
