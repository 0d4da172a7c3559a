package wellknown

// Labels and annotations on the objects fabricmap writes (HyperNodes, and the link-health label on Nodes).

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
