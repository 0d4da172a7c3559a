package aggregator

import "github.com/fabricmap/fabricmap/topology"

// inferStage infers the tree from the reports' evidence and every source's last good evidence (merge.go:
// pipeline.Infer, which `fabricmap topology` shares), says the conflicts between sources, and keeps the domains'
// names from one tree to the next (stablenames.go).
type inferStage struct {
	// r is the Reconciler whose dependencies (settings, log, metrics, Events, the poll stage) it uses.
	r *Reconciler
	// previousTree is the last tree built, whose names the next one keeps (see keepNames).
	previousTree *topology.Tree
}

// stageInfer is the Reconciler's infer stage, wired to it.
func (r *Reconciler) stageInfer() *inferStage {
	if r.infer.r == nil {
		r.infer.r = r
	}
	return &r.infer
}
