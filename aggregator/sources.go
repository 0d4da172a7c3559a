package aggregator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// DefaultSourcePriority is the order in which sources win conflicts when none is configured: what the node
// saw itself, then the fabric manager, then a capture, then labels an admin set.
var DefaultSourcePriority = []string{SourceReports, ufm.Name, ibfabric.Name, labels.Name}

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
// waits for (up to the poll's deadline): a tree written without a source that answers in a moment would be
// rewritten as soon as it does, at every start and every change of leader.
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
func (r *Reconciler) pollSources(ctx context.Context) {
	now := r.now()
	for _, p := range r.sourceList() {
		p.mu.Lock()
		p.metrics = r.Metrics
		p.mu.Unlock()
		p.start(ctx, now)
	}
}

// evidence returns the source's last good evidence, and the error of its latest poll when that failed (also on
// later calls until a poll succeeds), so that the caller can report the source stale. It takes in the outcome
// of a poll that finished since the last call, begins a poll when one is due, and waits only for the source's
// first outcome.
func (p *polledSource) evidence(ctx context.Context, now time.Time) (topology.Input, error) {
	p.take(now)
	p.start(ctx, now)
	if !p.taken {
		p.mu.Lock()
		running := p.running
		p.mu.Unlock()
		if running != nil {
			select {
			case <-running:
			case <-ctx.Done():
			}
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
	p.last, p.good, p.lastErr = o.in, true, nil
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

// rank orders source names by priority; names not in priority come last, by name.
func rank(priority []string) func(a, b string) int {
	pos := func(s string) int {
		if i := slices.Index(priority, s); i >= 0 {
			return i
		}
		return len(priority)
	}
	return func(a, b string) int {
		if d := pos(a) - pos(b); d != 0 {
			return d
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
}

// ValidateSourcePriority refuses an empty or repeated name in a priority list.
func ValidateSourcePriority(priority []string) error {
	seen := map[string]bool{}
	for _, s := range priority {
		if s == "" {
			return errors.New("source priority: empty source name")
		}
		if seen[s] {
			return fmt.Errorf("source priority: %q given twice", s)
		}
		seen[s] = true
	}
	return nil
}
