package aggregator

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/wellknown"
)

// Events of the deletion guard, recorded on DeletionGuard.Lease.
const (
	// ReasonDeletionsHeld (Warning): a pass would have deleted too many HyperNodes at once; none was deleted.
	ReasonDeletionsHeld = "DeletionsHeld"
	// ReasonDeletionsConfirmed (Normal): held deletions go ahead, confirmed by an admin or by their persistence.
	ReasonDeletionsConfirmed = "DeletionsConfirmed"
	// ReasonConfirmationRefused (Warning): the Lease's ConfirmDeletionsAnnotation is older than the hold or
	// dated in the future; it confirms nothing.
	ReasonConfirmationRefused = "ConfirmationRefused"
)

// maxConfirmSkew is how far ahead of the aggregator's clock a confirmation may be dated (clocks of an admin's
// machine and the cluster differ a little); later is refused.
const maxConfirmSkew = 5 * time.Minute

// confirmPoll is how often a held pass looks again for a confirmation: the passing time brings no watch event,
// and the annotation brings one only where the manager watches the Lease (deletionguardwatch.go).
const confirmPoll = 30 * time.Second

// DeletionGuard holds back the HyperNode deletions of a pass when too many of the managed HyperNodes are gone
// from the tree at once (every report deleted, the CRD reinstalled): nothing is deleted until the same set of
// deletions has persisted for ConfirmAfter, or an admin confirms with ConfirmDeletionsAnnotation.
type DeletionGuard struct {
	// MaxShare is the share (0 to 1) of the managed HyperNodes that may be gone from the tree together; more
	// is held.
	MaxShare float64
	// MinCount is how many HyperNodes may be gone together whatever their share (one node's leaf and the
	// domains only it held, in a small tree). Leaving none of the managed HyperNodes is held even so.
	MinCount int
	// ConfirmAfter is how long an unchanged set of held deletions waits before it goes ahead; zero waits for
	// an admin's confirmation.
	ConfirmAfter time.Duration
	// Lease is the object an admin annotates to confirm, and the one the guard's Events are recorded on: the
	// leader-election Lease, in the aggregator's namespace.
	Lease types.NamespacedName
}

// Validate checks the guard's settings.
func (g DeletionGuard) Validate() error {
	switch {
	case g.MaxShare < 0 || g.MaxShare > 1:
		return fmt.Errorf("deletion guard: max share %v is not between 0 and 1", g.MaxShare)
	case g.MinCount < 0:
		return fmt.Errorf("deletion guard: min count %d is negative", g.MinCount)
	case g.ConfirmAfter < 0:
		return fmt.Errorf("deletion guard: confirm-after %v is negative", g.ConfirmAfter)
	}
	return nil
}

// trips reports whether gone of the total managed HyperNodes being gone together needs a confirmation.
func (g DeletionGuard) trips(gone, total int) bool {
	switch {
	case gone == 0:
		return false
	case gone >= total:
		return true // the tree would be left with none of them
	case gone <= g.MinCount:
		return false
	}
	return float64(gone) > g.MaxShare*float64(total)
}

// guardState is what the guard remembers from one pass to the next.
type guardState struct {
	// held is the set of gone HyperNodes under hold, each gone since at least since.
	held  map[string]bool
	since time.Time
	// confirmed is the set whose deletion was confirmed: any part of it may go without a new hold.
	confirmed map[string]bool
	// refused is the last confirmation seen that was older than the hold or dated in the future (said once).
	refused time.Time
}

// guardVerdict is what the guard says of one pass.
type guardVerdict int

const (
	guardAllow            guardVerdict = iota // within the limits, or part of a confirmed set: deletions proceed
	guardHold                                 // held: nothing is deleted
	guardConfirmedByTime                      // held until now; the set persisted for ConfirmAfter
	guardConfirmedByAdmin                     // held until now; an admin confirmed
)

// guardDecision is the guard's verdict on one pass and what changed.
type guardDecision struct {
	Verdict guardVerdict
	// Started is set on the first held pass of a deletion set.
	Started bool
	// Lifted is set when a hold ends because the HyperNodes are back within the limits, unconfirmed.
	Lifted bool
	// Since is when the hold began (held and confirmed passes).
	Since time.Time
	// Stale is a confirmation older than the hold, when first seen: it confirms nothing.
	Stale time.Time
	// Future is a confirmation dated more than maxConfirmSkew ahead of now, when first seen: it confirms nothing.
	Future time.Time
}

// decide judges one pass: gone are the managed HyperNodes absent from the tree (within their grace period or
// past it), due how many of them are past it, tripped whether they are too many (DeletionGuard.trips).
// confirmedAt returns the time an admin confirmed (zero when none); it is called only for a held set. A hold
// starts only when something is due, and a set that grows (is no subset of the held one) starts a new hold.
// The rewrite guard judges its set of rewrites the same way (all of them due at once).
func (g DeletionGuard) decide(s guardState, gone []string, due int, tripped bool, now time.Time, confirmedAt func() time.Time) (guardDecision, guardState) {
	if !tripped {
		return guardDecision{Verdict: guardAllow, Lifted: s.held != nil}, guardState{}
	}
	set := make(map[string]bool, len(gone))
	for _, n := range gone {
		set[n] = true
	}
	if s.confirmed != nil && subset(set, s.confirmed) {
		return guardDecision{Verdict: guardAllow}, guardState{confirmed: set}
	}
	if due == 0 {
		return guardDecision{Verdict: guardAllow}, s // nothing to delete yet
	}
	var d guardDecision
	if s.held == nil || !subset(set, s.held) {
		s = guardState{since: now, refused: s.refused}
		d.Started = true
	}
	s.held = set
	d.Since = s.since
	if g.ConfirmAfter > 0 && now.Sub(s.since) >= g.ConfirmAfter {
		d.Verdict = guardConfirmedByTime
		return d, guardState{confirmed: set}
	}
	at := confirmedAt()
	future := at.After(now.Add(maxConfirmSkew))
	if !future && confirmedBy(at, s.since) {
		d.Verdict = guardConfirmedByAdmin
		return d, guardState{confirmed: set}
	}
	if !at.IsZero() && !at.Equal(s.refused) {
		s.refused = at
		if future {
			d.Future = at
		} else {
			d.Stale = at
		}
	}
	d.Verdict = guardHold
	return d, s
}

// confirmedBy reports whether a confirmation given at at covers a hold that began at since. The annotation
// holds whole seconds (`date -u +%FT%TZ`), so the hold's start counts from its second: a confirmation typed in
// the second the hold began (a script answering the Event) confirms it.
func confirmedBy(at, since time.Time) bool {
	return !at.IsZero() && !at.Before(since.Truncate(time.Second))
}

func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// guardDeletions decides whether the due deletions of this pass go ahead; gone are the owned HyperNodes absent
// from the tree, due how many of them are past their grace period, total the owned HyperNodes. A held pass is
// said in the metrics, the log and, when it starts, an Event on the Lease. It returns whether to delete, when to
// look again for a confirmation (zero when nothing is held), and whether a hold just lifted unconfirmed (the
// HyperNodes came back within the limits: those still gone must not be deleted the moment before theirs return).
func (gs *guardStage) guardDeletions(ctx context.Context, gone []string, due, total int) (ok bool, wait time.Duration, lifted bool) {
	g := gs.r.Config.DeletionGuard
	if g == nil {
		return true, 0, false
	}
	share := 100 * float64(len(gone)) / float64(max(total, 1))
	why := fmt.Sprintf("above the limit of %.0f%%", 100*g.MaxShare)
	if len(gone) >= total {
		why = "the tree would be left with none"
	}
	return gs.guardPass(ctx, &gs.guard, deletionHold, gone, due, g.trips(len(gone), total),
		fmt.Sprintf("%d of %d managed HyperNodes (%.0f%%) are gone from the tree, %s", len(gone), total, share, why))
}

// holdKind is what a guard holds: HyperNode deletions, or rewrites of the tree schedulers read.
type holdKind struct {
	// what names the held writes in the log and Events ("HyperNode deletions").
	what string
	// held and confirmed are the Events' reasons.
	held, confirmed string
	// gauge says how many writes are held.
	gauge func(*Metrics) prometheus.Gauge
	// passes counts held passes; confirmations counts confirmed sets, by what confirmed them.
	passes        func(*Metrics) prometheus.Counter
	confirmations func(*Metrics) *prometheus.CounterVec
}

// deletionHold is the deletion guard's kind.
var deletionHold = holdKind{what: "HyperNode deletions", held: ReasonDeletionsHeld, confirmed: ReasonDeletionsConfirmed,
	gauge:         func(m *Metrics) prometheus.Gauge { return m.deletionsHeld },
	passes:        func(m *Metrics) prometheus.Counter { return m.heldPasses },
	confirmations: func(m *Metrics) *prometheus.CounterVec { return m.deletionsConfirmed }}

// guardPass runs one guard (state) over set, of which due are ready to be written, tripped whether the set is
// beyond the limits; why says so for people. It returns whether the writes go ahead, when to look again for a
// confirmation, and whether a hold lifted unconfirmed.
func (gs *guardStage) guardPass(ctx context.Context, state *guardState, kind holdKind, set []string, due int, tripped bool, why string) (bool, time.Duration, bool) {
	g := gs.r.Config.DeletionGuard
	var lease *coordinationv1.Lease
	read := false
	getLease := func() *coordinationv1.Lease { // read at most once a pass, and only when something is held
		if !read {
			lease, read = gs.r.guardLease(ctx, g.Lease), true
		}
		return lease
	}
	now := gs.r.now()
	d, next := g.decide(*state, set, due, tripped, now, func() time.Time { return gs.confirmation(getLease(), g.Lease) })
	*state = next
	switch d.Verdict {
	case guardAllow:
		kind.gauge(gs.r.Metrics).Set(0)
		if d.Lifted {
			gs.r.Log.Info(kind.what+" hold lifted: back within the limits", "pending", len(set))
		}
		return true, 0, d.Lifted
	case guardConfirmedByTime, guardConfirmedByAdmin:
		by := map[guardVerdict]string{guardConfirmedByTime: "persistence", guardConfirmedByAdmin: "annotation"}[d.Verdict]
		kind.gauge(gs.r.Metrics).Set(0)
		kind.confirmations(gs.r.Metrics).WithLabelValues(by).Inc()
		heldFor := now.Sub(d.Since)
		gs.r.Log.Warn("held "+kind.what+" confirmed; writing them", "by", by, "due", due, "why", why, "heldFor", heldFor)
		gs.r.leaseEvent(g.Lease, getLease(), corev1.EventTypeNormal, kind.confirmed, "GuardTopology",
			"%d held %s go ahead (%s), confirmed by %s after %v", due, kind.what, why, by, heldFor.Round(time.Second))
		return true, 0, false
	}
	kind.gauge(gs.r.Metrics).Set(float64(due))
	kind.passes(gs.r.Metrics).Inc()
	if d.Started {
		confirm := fmt.Sprintf("kubectl -n %s annotate lease %s %s=$(date -u +%%FT%%TZ) --overwrite", g.Lease.Namespace, g.Lease.Name, wellknown.ConfirmDeletionsAnnotation)
		wait := "never (an admin must confirm)"
		if g.ConfirmAfter > 0 {
			wait = g.ConfirmAfter.String()
		}
		gs.r.Log.Warn(kind.what+" held: too much of the tree would change at once; nothing written",
			"due", due, "why", why, "first", head(set, 10), "autoConfirmAfter", wait, "confirm", confirm)
		gs.r.leaseEvent(g.Lease, getLease(), corev1.EventTypeWarning, kind.held, "GuardTopology",
			"%d %s held: %s; they go ahead when unchanged for %s, or at once with: %s", due, kind.what, why, wait, confirm)
	} else {
		gs.r.Log.Debug(kind.what+" still held", "due", due, "why", why, "since", d.Since)
	}
	for _, refused := range []struct {
		at  time.Time
		why string
	}{{d.Stale, "it is older than the hold, which began at " + d.Since.UTC().Format(time.RFC3339)},
		{d.Future, fmt.Sprintf("it is dated more than %v ahead of the aggregator's clock (%s)", maxConfirmSkew, now.UTC().Format(time.RFC3339))}} {
		if refused.at.IsZero() {
			continue
		}
		gs.r.Log.Warn("confirmation of held writes refused: "+refused.why+"; set it again", "lease", g.Lease,
			"annotation", wellknown.ConfirmDeletionsAnnotation, "confirmedAt", refused.at, "heldSince", d.Since, "held", kind.what)
		gs.r.leaseEvent(g.Lease, getLease(), corev1.EventTypeWarning, ReasonConfirmationRefused, "GuardTopology",
			"%s=%s confirms nothing: %s; set it to the current time to confirm the held %s",
			wellknown.ConfirmDeletionsAnnotation, refused.at.UTC().Format(time.RFC3339), refused.why, kind.what)
	}
	requeue := confirmPoll
	if g.ConfirmAfter > 0 {
		requeue = min(requeue, max(d.Since.Add(g.ConfirmAfter).Sub(now), time.Second))
	}
	return false, requeue, false
}

// confirmation returns the time the Lease's ConfirmDeletionsAnnotation states: zero when there is none, or
// when it is no time (then the log says so, and nothing is confirmed).
func (gs *guardStage) confirmation(lease *coordinationv1.Lease, key types.NamespacedName) time.Time {
	if lease == nil {
		return time.Time{}
	}
	v, ok := lease.Annotations[wellknown.ConfirmDeletionsAnnotation]
	if !ok {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		gs.r.Log.Warn("confirmation of held deletions ignored: its value is no RFC 3339 time", "lease", key,
			"err", fmt.Errorf("annotation %s on Lease %s: %w", wellknown.ConfirmDeletionsAnnotation, key, err))
		return time.Time{}
	}
	return at
}
