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
)

// Labels fabricmap puts on everything it creates. The aggregator only ever updates or deletes objects that
// carry ManagedByLabel=ManagedByValue.
const (
	// ManagedByLabel marks objects fabricmap owns.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value on objects fabricmap owns.
	ManagedByValue = "fabricmap"
	// SourceLabel records the evidence a HyperNode came from.
	SourceLabel = "fabricmap.io/source"
	// TierNameLabel repeats the tier name so that HyperNodes can be listed by tier.
	TierNameLabel = "fabricmap.io/tier-name"
	// SwitchesAnnotation lists, comma-separated and sorted, the switches a HyperNode's domain stands for: its
	// identity, which outlives its name. The aggregator reads it back when it starts, so that a domain keeps
	// its name across restarts (topology.KeepNames) although the switch it was named after has gone.
	SwitchesAnnotation = "fabricmap.io/switches"
	// DegradedUplinksAnnotation gives, in decimal, how many of a HyperNode's domain's uplinks (its links to
	// its parent's switches) fabric health judged degraded or down (topology.Domain.DegradedUplinks); absent
	// when none. Placement ranks such a domain after a healthy one of the same tier.
	DegradedUplinksAnnotation = "fabricmap.io/degraded-uplinks"
	// LinkHealthLabel is on a node whose compute link fabric health judged sick, with the value
	// LinkHealthDegraded or LinkHealthDown; absent when the node's links are healthy. The placer treats such
	// nodes as unavailable for new placements (--avoid-degraded).
	LinkHealthLabel = "fabricmap.io/link-health"
	// NVLinkDomainLabel is on every accelerator HyperNode and sub-domain, set to its NVLink domain as the node
	// label LabelKeys.Accelerator gives it: `kubectl get hypernodes -l fabricmap.io/nvlink-domain=X` lists the
	// HyperNodes of NVLink domain X, one per leaf when it spans leaves.
	NVLinkDomainLabel = "fabricmap.io/nvlink-domain"
	// NVLinkDomainAnnotation holds an accelerator HyperNode's NVLink domain in its canonical spelling
	// ("<clusterUUID>.<cliqueId>", topology.CanonicalNVLinkID), unhashed; NVLinkSubDomainAnnotation a
	// sub-domain's rack likewise.
	NVLinkDomainAnnotation    = "fabricmap.io/nvlink-domain"
	NVLinkSubDomainAnnotation = "fabricmap.io/nvlink-sub-domain"
	// NVLinkPartAnnotation is "true" on an accelerator HyperNode that holds only the part of its NVLink domain
	// behind its leaf (topology.Domain.NVLinkPart): the NVLink domain spans leaves.
	NVLinkPartAnnotation = "fabricmap.io/nvlink-part"
	// LinkHealthDegraded and LinkHealthDown are LinkHealthLabel's values.
	LinkHealthDegraded = "degraded"
	LinkHealthDown     = "down"
)

// OwnedSelector is the label selector that matches every object fabricmap owns.
func OwnedSelector() map[string]string { return map[string]string{ManagedByLabel: ManagedByValue} }

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
				ManagedByLabel: ManagedByValue,
				TierNameLabel:  topology.SafeName(d.TierName),
			},
		},
		Spec:   topologyv1alpha1.HyperNodeSpec{Tier: d.Tier, TierName: d.TierName},
		Status: topologyv1alpha1.HyperNodeStatus{NodeCount: int64(t.NodeCount(d.Name))},
	}
	if d.Source != "" {
		hn.Labels[SourceLabel] = topology.SafeName(d.Source)
	}
	if len(d.Switches) > 0 {
		setAnnotation(&hn, SwitchesAnnotation, strings.Join(d.Switches, ","))
	}
	if d.DegradedUplinks > 0 {
		setAnnotation(&hn, DegradedUplinksAnnotation, strconv.Itoa(d.DegradedUplinks))
	}
	if d.NVLinkDomain != "" {
		hn.Labels[NVLinkDomainLabel] = LabelValue(d.NVLinkDomain)
		setAnnotation(&hn, NVLinkDomainAnnotation, d.NVLinkDomain)
		if d.NVLinkSubDomain != "" {
			setAnnotation(&hn, NVLinkSubDomainAnnotation, d.NVLinkSubDomain)
		}
		if d.NVLinkPart {
			setAnnotation(&hn, NVLinkPartAnnotation, "true")
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
