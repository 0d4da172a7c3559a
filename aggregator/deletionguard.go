package aggregator

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/topology"
)

// ConfirmDeletionsAnnotation is the annotation an admin sets on DeletionGuard.Lease to let held deletions go
// ahead. Its value is a time (RFC 3339, e.g. `date -u +%FT%TZ`); it confirms a hold that began at or before
// that time, so a confirmation left from an earlier hold never confirms a new one.
const ConfirmDeletionsAnnotation = "fabricmap.io/confirm-deletions"

// Events of the deletion guard, recorded on DeletionGuard.Lease.
const (
	// ReasonDeletionsHeld (Warning): a pass would have deleted too many HyperNodes at once; none was deleted.
	ReasonDeletionsHeld = "DeletionsHeld"
	// ReasonDeletionsConfirmed (Normal): held deletions go ahead, confirmed by an admin or by their persistence.
	ReasonDeletionsConfirmed = "DeletionsConfirmed"
)

// confirmPoll is how often a held pass looks again for a confirmation: neither the annotation nor the passing
// time brings a watch event.
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
	// stale is the last confirmation seen that was older than the hold (said once).
	stale time.Time
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
}

// decide judges one pass: gone are the managed HyperNodes absent from the tree (within their grace period or
// past it), due how many of them are past it, total the managed HyperNodes. confirmedAt returns the time an
// admin confirmed (zero when none); it is called only for a held set. A hold starts only when something is
// due, and a set that grows (is no subset of the held one) starts a new hold.
func (g DeletionGuard) decide(s guardState, gone []string, due, total int, now time.Time, confirmedAt func() time.Time) (guardDecision, guardState) {
	if !g.trips(len(gone), total) {
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
		s = guardState{since: now}
		d.Started = true
	}
	s.held = set
	d.Since = s.since
	if g.ConfirmAfter > 0 && now.Sub(s.since) >= g.ConfirmAfter {
		d.Verdict = guardConfirmedByTime
		return d, guardState{confirmed: set}
	}
	at := confirmedAt()
	if confirmedBy(at, s.since) {
		d.Verdict = guardConfirmedByAdmin
		return d, guardState{confirmed: set}
	}
	if !at.IsZero() && !at.Equal(s.stale) {
		d.Stale, s.stale = at, at
	}
	d.Verdict = guardHold
	return d, s
}

// confirmedBy reports whether a confirmation given at at covers a hold that began at since.
func confirmedBy(at, since time.Time) bool {
	return !at.IsZero() && !at.Before(since)
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
// said in the metrics, the log and, when it starts, an Event on the Lease. It returns whether to delete, and
// when to look again for a confirmation (zero when nothing is held).
func (r *Reconciler) guardDeletions(ctx context.Context, gone []string, due, total int) (bool, time.Duration) {
	g := r.Config.DeletionGuard
	if g == nil {
		return true, 0
	}
	var lease *coordinationv1.Lease
	read := false
	getLease := func() *coordinationv1.Lease { // read at most once a pass, and only when something is held
		if !read {
			lease, read = r.guardLease(ctx, g.Lease), true
		}
		return lease
	}
	now := r.now()
	d, next := g.decide(r.guard, gone, due, total, now, func() time.Time { return r.confirmation(getLease(), g.Lease) })
	r.guard = next
	share := 100 * float64(len(gone)) / float64(max(total, 1))
	switch d.Verdict {
	case guardAllow:
		r.Metrics.deletionsHeld.Set(0)
		if d.Lifted {
			r.Log.Info("HyperNode deletion hold lifted: the tree is back within the limits", "gone", len(gone), "managed", total)
		}
		return true, 0
	case guardConfirmedByTime, guardConfirmedByAdmin:
		by := map[guardVerdict]string{guardConfirmedByTime: "persistence", guardConfirmedByAdmin: "annotation"}[d.Verdict]
		r.Metrics.deletionsHeld.Set(0)
		r.Metrics.deletionsConfirmed.WithLabelValues(by).Inc()
		heldFor := now.Sub(d.Since)
		r.Log.Warn("held HyperNode deletions confirmed; deleting", "by", by, "due", due, "gone", len(gone), "managed", total,
			"share", fmt.Sprintf("%.0f%%", share), "heldFor", heldFor)
		r.leaseEvent(g.Lease, getLease(), corev1.EventTypeNormal, ReasonDeletionsConfirmed, "DeleteHyperNodes",
			"%d held HyperNode deletions go ahead (%d of %d managed HyperNodes gone), confirmed by %s after %v",
			due, len(gone), total, by, heldFor.Round(time.Second))
		return true, 0
	}
	r.Metrics.deletionsHeld.Set(float64(due))
	r.Metrics.heldPasses.Inc()
	if d.Started {
		confirm := fmt.Sprintf("kubectl -n %s annotate lease %s %s=$(date -u +%%FT%%TZ) --overwrite", g.Lease.Namespace, g.Lease.Name, ConfirmDeletionsAnnotation)
		wait := "never (an admin must confirm)"
		if g.ConfirmAfter > 0 {
			wait = g.ConfirmAfter.String()
		}
		r.Log.Warn("HyperNode deletions held: too many HyperNodes gone from the tree at once; nothing deleted",
			"due", due, "gone", len(gone), "managed", total, "share", fmt.Sprintf("%.0f%%", share),
			"maxShare", fmt.Sprintf("%.0f%%", 100*g.MaxShare), "first", head(gone, 10), "autoConfirmAfter", wait, "confirm", confirm)
		why := fmt.Sprintf("above the limit of %.0f%%", 100*g.MaxShare)
		if len(gone) >= total {
			why = "the tree would be left with none"
		}
		r.leaseEvent(g.Lease, getLease(), corev1.EventTypeWarning, ReasonDeletionsHeld, "DeleteHyperNodes",
			"%d HyperNode deletions held: %d of %d managed HyperNodes (%.0f%%) are gone from the tree, %s; they go ahead when unchanged for %s, or at once with: %s",
			due, len(gone), total, share, why, wait, confirm)
	} else {
		r.Log.Debug("HyperNode deletions still held", "due", due, "gone", len(gone), "managed", total, "since", d.Since)
	}
	if !d.Stale.IsZero() {
		r.Log.Warn("confirmation of held deletions ignored: it is older than the hold; set it again", "lease", g.Lease,
			"annotation", ConfirmDeletionsAnnotation, "confirmedAt", d.Stale, "heldSince", d.Since)
	}
	requeue := confirmPoll
	if g.ConfirmAfter > 0 {
		requeue = min(requeue, max(d.Since.Add(g.ConfirmAfter).Sub(now), time.Second))
	}
	return false, requeue
}

// guardLease reads the guard's Lease from the API server (the cache holds no Lease of this name); nil when it
// cannot be read: without leader election it may not exist, and an admin may create it to confirm.
func (r *Reconciler) guardLease(ctx context.Context, key types.NamespacedName) *coordinationv1.Lease {
	var lease coordinationv1.Lease
	if err := r.Live.Get(ctx, key, &lease); err != nil {
		if !apierrors.IsNotFound(err) {
			r.Log.Warn("cannot read the Lease that confirms held deletions", "lease", key, "err", fmt.Errorf("reading Lease %s: %w", key, err))
		}
		return nil
	}
	return &lease
}

// confirmation returns the time the Lease's ConfirmDeletionsAnnotation states: zero when there is none, or
// when it is no time (then the log says so, and nothing is confirmed).
func (r *Reconciler) confirmation(lease *coordinationv1.Lease, key types.NamespacedName) time.Time {
	if lease == nil {
		return time.Time{}
	}
	v, ok := lease.Annotations[ConfirmDeletionsAnnotation]
	if !ok {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		r.Log.Warn("confirmation of held deletions ignored: its value is no RFC 3339 time", "lease", key,
			"err", fmt.Errorf("annotation %s on Lease %s: %w", ConfirmDeletionsAnnotation, key, err))
		return time.Time{}
	}
	return at
}

// leaseEvent records an Event on the leader Lease (its UID when it could be read), when a recorder is set: the
// object that stands for the aggregator itself.
func (r *Reconciler) leaseEvent(key types.NamespacedName, lease *coordinationv1.Lease, eventType, reason, action, format string, args ...any) {
	if r.Events == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: key.Namespace, Name: key.Name}
	if lease != nil {
		ref.UID = lease.UID
	}
	r.Events.Eventf(ref, nil, eventType, reason, action, "%s", topology.Printable(fmt.Sprintf(format, args...)))
}

// fabricEvent records an Event about the whole fabric (action BuildTopology) on the leader Lease,
// DeletionGuard.Lease; without a deletion guard no Lease stands for the aggregator, and only the log says it.
func (r *Reconciler) fabricEvent(ctx context.Context, eventType, reason, format string, args ...any) {
	if r.Config.DeletionGuard == nil || r.Events == nil {
		return
	}
	key := r.Config.DeletionGuard.Lease
	r.leaseEvent(key, r.guardLease(ctx, key), eventType, reason, "BuildTopology", format, args...)
}
