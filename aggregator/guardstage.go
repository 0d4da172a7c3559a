package aggregator

import "time"

// guardStage decides, between inference and writing, what of a pass may be written: the HyperNodes gone from
// the tree, kept below it for their grace period (hypernodeplan.go), the deletion guard (too many of them gone at
// once), the rewrite guard (too many moved or relabelled), the consistency check of a plan, the
// wait for sources that have not answered, the hold of the labels of nodes the tree no longer places, and the
// foreign HyperNodes over fabricmap's nodes, said and never written. It keeps what it held and said between passes.
type guardStage struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, clock) it uses.
	r *Reconciler
	// absentSince records when an owned HyperNode first went missing from the inferred tree (hypernodeplan.go).
	absentSince map[string]time.Time
	// guard is the deletion guard's memory of held and confirmed deletions (see guardDeletions).
	guard guardState
	// rewriteGuard is the rewrite guard's memory of held and confirmed rewrites and its baseline (rewriteguard.go).
	rewriteGuard rewriteGuardState
	// inconsistent is the last inconsistency that kept a pass from writing, said once (consistency.go).
	inconsistent string
	// awaitedSaid is the set of awaited sources last said (sourcehold.go).
	awaitedSaid string
	// foreignSaid is the set of foreign HyperNodes over fabricmap's nodes last said (foreignhypernodes.go).
	foreignSaid string
	// unplacedSince records when each node carrying fabricmap's topology labels was first seen without a place in
	// the tree, for Config.UnplacedLabelHold (labelhold.go).
	unplacedSince map[string]time.Time
}

// stageGuard is the Reconciler's guard stage, wired to it, its map of absent HyperNodes made.
func (r *Reconciler) stageGuard() *guardStage {
	if r.guards.r == nil {
		r.guards.r = r
	}
	if r.guards.absentSince == nil {
		r.guards.absentSince = map[string]time.Time{}
	}
	return &r.guards
}

// deleted forgets the grace period of a HyperNode the write stage deleted.
func (gs *guardStage) deleted(name string) {
	delete(gs.absentSince, name)
}
