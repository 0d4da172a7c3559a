package aggregator

// writeStage writes what a pass decided: the HyperNodes (hypernodewrite.go), the node labels (nodelabels.go) and
// every other output of the registry (outputs.go), each object only when it differs from the live one. It keeps
// what it wrote and said between passes: the versions the cache may still show from before its writes, the
// HyperNodes whose status another writer keeps, the outputs pruned and the refusals already said.
type writeStage struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, clock) it uses.
	r *Reconciler
	// hyperNodesWritten and nodesWritten hold, for each HyperNode and Node written here, its resource versions
	// from before the last write, which the cache may still show (applyHyperNode, syncNodeLabels).
	hyperNodesWritten, nodesWritten writtenVersions
	// statusYielded holds the HyperNodes whose status another writer keeps (statusowner.go).
	statusYielded statusYielded
	// prunedOff holds the outputs turned off whose objects from an earlier run are deleted (outputs.go).
	prunedOff map[string]bool
	// foreignOutputsSaid holds the output objects already said to be someone else's (outputs.go).
	foreignOutputsSaid map[string]bool
	// unwritableSaid holds the nodes an output leaves out, already logged, by output (outputs.go).
	unwritableSaid map[string]bool
}

// stageWrite is the Reconciler's write stage, wired to it. Reconcile wires it before its writes run side by
// side.
func (r *Reconciler) stageWrite() *writeStage {
	if r.write.r == nil {
		r.write.r = r
	}
	return &r.write
}
