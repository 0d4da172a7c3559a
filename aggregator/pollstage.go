package aggregator

// pollStage polls the fabric-wide sources (sources.Spec: a capture, UFM, labels) off the reconcile, each on its
// interval, and keeps each one's last good evidence (sources.go); it says what a partial capture left out
// (partialcapture.go) and which hosts a source could not place (hostnotes.go).
type pollStage struct {
	// r is the Reconciler whose dependencies (clients, settings, log, metrics, Events, clock, Sources) it uses.
	r *Reconciler
	// polled are the sources polled, built once from the Reconciler's Sources (sourceList).
	polled []*polledSource
}

// stagePoll is the Reconciler's poll stage, wired to it.
func (r *Reconciler) stagePoll() *pollStage {
	if r.polls.r == nil {
		r.polls.r = r
	}
	return &r.polls
}
