package aggregator

import "github.com/fabricmap/fabricmap/api/v1alpha1"

// evidenceStage turns the cache's reports and Nodes into the evidence a pass infers from: it lists the Nodes,
// drops the reports of Nodes gone (orphans.go), ages the reports whose agents went silent (expiry.go), keeps each
// node's last usable report when its current one cannot be used (lastgood.go) and says what it rejected
// (rejections.go). It keeps the last good reports and the ages between passes.
type evidenceStage struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, clock, heartbeats) it uses.
	r *Reconciler
	// lastGood holds each node's last usable report spec, whose evidence is used when its current report cannot
	// be (lastgood.go).
	lastGood map[string]v1alpha1.NodeFabricReportSpec
	// ages holds the reports that are expired or dropped, as last seen.
	ages map[string]reportAge
	// expirySuspended is set while most agents are silent together (see checkMassSilence).
	expirySuspended bool
}

// stageEvidence is the Reconciler's evidence stage, wired to it, its maps made.
func (r *Reconciler) stageEvidence() *evidenceStage {
	if r.inputs.r == nil {
		r.inputs.r = r
	}
	if r.inputs.lastGood == nil {
		r.inputs.lastGood = map[string]v1alpha1.NodeFabricReportSpec{}
	}
	if r.inputs.ages == nil {
		r.inputs.ages = map[string]reportAge{}
	}
	return &r.inputs
}
