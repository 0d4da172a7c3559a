package wellknown

// Annotations and labels on the aggregator's leader-election Lease: what it states for the CLI and what an admin sets to confirm held writes.

// LabelKeysAnnotation is set by the leading aggregator on its leader-election Lease: the node-label keys it
// writes (EncodeLabelKeys), so that the CLI reads them instead of being told.
const LabelKeysAnnotation = "fabricmap.io/label-keys"

// AggregatorLeaseLabel marks the leading aggregator's leader-election Lease (value "true"), whatever its name
// (--leader-election-id), so that the CLI finds the Lease that states LabelKeysAnnotation.
const AggregatorLeaseLabel = "fabricmap.io/aggregator-lease"

// HyperNodeCRDAnnotation is set by the leading aggregator on its leader-election Lease: HyperNodeCRDInstalled
// while the API server serves Volcano's HyperNodes, HyperNodeCRDMissing while it does not (no HyperNode is
// written then; node labels and the other outputs are).
const HyperNodeCRDAnnotation = "fabricmap.io/hypernode-crd"

// Values of HyperNodeCRDAnnotation.
const (
	// HyperNodeCRDInstalled: HyperNodes are served and written.
	HyperNodeCRDInstalled = "installed"
	// HyperNodeCRDMissing: HyperNodes are not served (Volcano's CRD not installed); they start when it is.
	HyperNodeCRDMissing = "missing"
)

// ConfirmDeletionsAnnotation is the annotation an admin sets on DeletionGuard.Lease to let held deletions (and
// held rewrites, rewriteguard.go) go ahead. Its value is a time (RFC 3339, e.g. `date -u +%FT%TZ`); it confirms
// a hold that began at or before that time, so a confirmation left from an earlier hold never confirms a new
// one, and one dated more than maxConfirmSkew ahead of the aggregator's clock confirms nothing (a confirmation
// "dated 2099" would otherwise confirm every future hold); both are refused with a Warning Event.
const ConfirmDeletionsAnnotation = "fabricmap.io/confirm-deletions"
