package aggregator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/topology"
)

// firstPollWait bounds how long the first reconcile waits for a source's first poll.
const firstPollWait = 10 * time.Second

// DefaultPollTimeout bounds one poll of a source whose sources.Spec sets no bound of its own (UFM's is
// --ufm-poll-timeout).
const DefaultPollTimeout = 2 * time.Minute

// How soon the reconcile looks again for the outcome of a poll in flight: after as long again as the poll has
// taken so far, within these bounds, so that a quick poll is taken in at once and a stalled one costs a
// handful of rebuilds until its deadline.
const (
	minPickup = 250 * time.Millisecond
	maxPickup = 30 * time.Second
)

// polledSource runs the polls of one source off the reconcile: each poll in its own goroutine, under a
// deadline, begun once interval has passed since the last one began; the reconcile takes in the outcome of a
// finished poll and never waits for one in flight, so a slow source never holds up the tree built from the
// reports and the other sources. The one exception is the source's first poll, which the first reconcile
// waits for, up to firstPollWait (a tree written without a source that answers in a moment would be rewritten
// as soon as it does); a source that has not answered well since the start then holds the pass's writes while
// HyperNodes are there to keep (sourcehold.go), rather than block the reconcile for the poll's whole deadline.
type polledSource struct {
	src         sources.Source
	interval    time.Duration
	pollTimeout time.Duration // 0: DefaultPollTimeout

	// What the reconcile took in, used on the reconcile's goroutine only (mergeSources reads it).
	last    topology.Input // the last good evidence
	good    bool           // whether there is last good evidence
	attempt time.Time      // when the latest outcome was taken in (mergeSources counts and logs it on that pass)
	lastErr error          // why the latest poll failed; nil when it did not
	taken   bool           // whether any outcome was taken in
	shrink  sources.ShrinkGuard
	held    *shrinkHold  // the smaller set the shrink guard holds back; nil when none
	log     *slog.Logger // nil until the reconciler hands it over (pollSources)
	noted   string       // the host notes last recorded as Events (hostnotes.go)
	// partialSaid is the error of the partial capture last recorded as an Event (partialcapture.go).
	partialSaid string

	mu      sync.Mutex
	metrics *Metrics      // nil until the reconciler hands them over (pollSources)
	started time.Time     // when the latest poll began, by the reconciler's clock
	running chan struct{} // closed when the poll in flight ends; nil when none runs
	outcome *pollOutcome  // the outcome of the latest poll, not yet taken in
}

// pollOutcome is what one poll gave.
type pollOutcome struct {
	in  topology.Input
	err error
}

// pollSources begins every poll that is due, each in its own goroutine, before mergeSources takes in what
// finished polls published: the first polls of all sources run side by side.
func (ps *pollStage) pollSources(ctx context.Context) {
	now := ps.r.now()
	for i, p := range ps.sourceList() {
		p.mu.Lock()
		p.metrics = ps.r.Metrics
		p.mu.Unlock()
		if i < len(ps.r.Sources) { // sourceList follows ps.r.Sources
			p.shrink, p.log = ps.r.Sources[i].Shrink, ps.r.Log
		}
		p.start(ctx, now)
	}
}

// evidence returns the source's last good evidence, and the error of its latest poll when that failed (also on
// later calls until a poll succeeds), so that the caller can report the source stale. It takes in the outcome
// of a poll that finished since the last call, begins a poll when one is due, and waits only for the source's
// first outcome, up to firstPollWait.
func (p *polledSource) evidence(ctx context.Context, now time.Time) (topology.Input, error) {
	p.take(now)
	p.start(ctx, now)
	if !p.taken {
		p.mu.Lock()
		running := p.running
		p.mu.Unlock()
		if running != nil {
			wait := time.NewTimer(firstPollWait)
			select {
			case <-running:
			case <-ctx.Done():
			case <-wait.C:
			}
			wait.Stop()
		}
		p.take(now)
	}
	return p.last, p.lastErr
}

// take takes in the outcome of the latest poll, if one finished since the last take: a failed poll keeps the
// last good evidence.
func (p *polledSource) take(now time.Time) {
	p.mu.Lock()
	o := p.outcome
	p.outcome = nil
	p.mu.Unlock()
	if o == nil {
		return
	}
	p.attempt, p.taken = now, true
	if o.err != nil {
		p.lastErr = fmt.Errorf("source %s: %w", p.src.Name(), o.err)
		return
	}
	p.lastErr = nil
	if p.holdShrink(o.in, now) {
		return
	}
	p.last, p.good = o.in, true
}

// shrinkHold is a poll the shrink guard holds back: the nodes it lost and since when they are missing.
type shrinkHold struct {
	gone  []string // sorted
	of    int      // the nodes of the last good evidence
	since time.Time
}

// holdShrink tells whether the shrink guard holds back in, a successful poll's evidence: when it lacks more
// than the guard's share of the nodes of the last good evidence, that evidence stays in use until the same
// nodes have stayed missing for the guard's confirmation period; then in is taken in. A poll that loses other
// nodes starts the period again; one within the share ends the hold. The gauge and the log say which.
func (p *polledSource) holdShrink(in topology.Input, now time.Time) bool {
	name := p.src.Name()
	if !p.good || p.shrink.Off() {
		p.endHold(name, "")
		return false
	}
	gone, of := lostNodes(p.last, in)
	if of == 0 || float64(len(gone)) <= p.shrink.MaxShare*float64(of) {
		p.endHold(name, "the source gives its nodes again; the hold ends")
		return false
	}
	if p.held != nil && slices.Equal(p.held.gone, gone) {
		if now.Sub(p.held.since) < p.shrink.ConfirmAfter {
			return true
		}
		p.logger().Warn("the nodes a source lost at once stayed missing for the confirmation period; its smaller evidence is used now",
			"source", name, "lost", len(gone), "of", of, "since", p.held.since, "nodes", head(gone, 20))
		p.held = nil
		p.setHeld(name, 0)
		return false
	}
	p.held = &shrinkHold{gone: gone, of: of, since: now}
	p.logger().Warn("a source lost many of its nodes at once; its last good evidence stays in use until they stay missing for the confirmation period",
		"source", name, "lost", len(gone), "of", of, "maxShare", p.shrink.MaxShare, "confirmAfter", p.shrink.ConfirmAfter,
		"until", now.Add(p.shrink.ConfirmAfter), "nodes", head(gone, 20))
	p.setHeld(name, len(gone))
	return true
}

// endHold ends a hold, if any, logging why.
func (p *polledSource) endHold(name, why string) {
	if p.held == nil {
		return
	}
	if why != "" {
		p.logger().Info(why, "source", name, "heldSince", p.held.since)
	}
	p.held = nil
	p.setHeld(name, 0)
}

func (p *polledSource) setHeld(name string, n int) {
	p.mu.Lock()
	m := p.metrics
	p.mu.Unlock()
	if m != nil {
		m.sourceShrinkHeld.WithLabelValues(name).Set(float64(n))
	}
}

func (p *polledSource) logger() *slog.Logger {
	if p.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.log
}

// lostNodes returns the nodes last has and in lacks, sorted, and how many nodes last has.
func lostNodes(last, in topology.Input) (gone []string, of int) {
	now := make(map[string]bool, len(in.Nodes))
	for _, e := range in.Nodes {
		now[e.Node] = true
	}
	seen := make(map[string]bool, len(last.Nodes))
	for _, e := range last.Nodes {
		if seen[e.Node] {
			continue
		}
		seen[e.Node] = true
		if !now[e.Node] {
			gone = append(gone, e.Node)
		}
	}
	slices.Sort(gone)
	return gone, len(seen)
}

// start begins a poll unless one runs, its outcome awaits being taken in, or interval has not passed since the
// last one began.
func (p *polledSource) start(ctx context.Context, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running != nil || p.outcome != nil || !p.started.IsZero() && now.Sub(p.started) < p.interval {
		return
	}
	p.started = now
	p.running = make(chan struct{})
	go p.run(pollParent(ctx), p.running, p.metrics)
}

// pollParent is the context polls run under: the reconcile's, so that the manager stopping (leadership lost)
// cancels them, unless it has a deadline of its own (a per-reconcile timeout), which a poll must outlive.
func pollParent(ctx context.Context) context.Context {
	if _, ok := ctx.Deadline(); ok {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// timeout is the deadline of one poll of the source.
func (p *polledSource) timeout() time.Duration {
	if p.pollTimeout > 0 {
		return p.pollTimeout
	}
	return DefaultPollTimeout
}

// run is one poll: the source asked under the poll's deadline, its outcome published for the reconcile. A
// panic in the source fails the poll instead of the process.
func (p *polledSource) run(parent context.Context, done chan struct{}, m *Metrics) {
	timeout := p.timeout()
	ctx, cancel := context.WithTimeout(parent, timeout)
	name := p.src.Name()
	begin := time.Now()
	var o pollOutcome
	defer func() {
		if v := recover(); v != nil {
			o = pollOutcome{err: fmt.Errorf("the poll panicked: %v", v)}
		}
		cancel()
		if o.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.err = fmt.Errorf("gave up at the poll deadline of %v: %w", timeout, o.err)
			if m != nil {
				m.sourcePollTimeouts.WithLabelValues(name).Inc()
			}
		}
		if m != nil {
			m.sourcePollDuration.WithLabelValues(name).Observe(time.Since(begin).Seconds())
		}
		p.mu.Lock()
		p.outcome, p.running = &o, nil
		p.mu.Unlock()
		close(done)
	}()
	o.in, o.err = p.src.Evidence(ctx)
}

// nextPoll is how long until the reconcile should look at the source again: soon while a poll is in flight or
// its outcome awaits being taken in, else when the next poll is due.
func (p *polledSource) nextPoll(now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.outcome != nil:
		return minPickup
	case p.running != nil:
		return min(max(now.Sub(p.started), minPickup), maxPickup)
	}
	return max(p.interval-now.Sub(p.started), time.Second)
}

// sourceList returns the polled sources, built once from ps.r.Sources (an interval of 1 minute when a Spec sets none).
func (ps *pollStage) sourceList() []*polledSource {
	if ps.polled != nil {
		return ps.polled
	}
	ps.polled = []*polledSource{}
	for _, s := range ps.r.Sources {
		ps.polled = append(ps.polled, &polledSource{src: s.Source, interval: cmp.Or(s.Interval, time.Minute), pollTimeout: s.PollTimeout})
	}
	return ps.polled
}
