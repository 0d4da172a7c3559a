package placer

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fabricmap/fabricmap/placement"
)

// ReasonStaleTopology is the Warning Event on a gang planned on the last consistent topology tree while the
// current one is inconsistent.
const ReasonStaleTopology = "StaleTopology"

// InconsistentTreeError is a pass that read an inconsistent topology tree (inconsistentTree) with no
// consistent tree read since the placer started to fall back on: nothing is placed.
type InconsistentTreeError struct {
	// Err is the inconsistency, as ReadTree or compiling the tree found it.
	Err error
}

func (e *InconsistentTreeError) Error() string {
	return "the topology tree is inconsistent and no consistent tree has been read since the placer started: " + e.Err.Error()
}

func (e *InconsistentTreeError) Unwrap() error { return e.Err }

// inconsistentTree says whether err is objects that describe no usable tree (a HyperNode member of two
// others, a node in two domains, a label value under two parents, a parent not above its child), as while the
// aggregator rewrites the tree, rather than a failed read or no topology at all.
func inconsistentTree(err error) bool {
	var in *placement.InputError
	return errors.As(err, &in)
}

// lastTree is the placer's memory of the topology across passes: the last consistent tree, and whether the
// current read is inconsistent. Only the reconciler's single worker touches it.
type lastTree struct {
	// fabric is the last consistent tree, compiled; nil until one is read.
	fabric *placement.Fabric
	// at is when it was read (the last pass that found it consistent).
	at time.Time
	// stale is what is wrong with the current tree while the passes place with fabric; "" when current.
	stale string
	// since is when the current inconsistency was first read.
	since time.Time
	// never says that the passes since the start found only inconsistent trees (for the log on the first
	// consistent one).
	never bool
}

// staleTree says, on a snapshot, that its fabric is the last consistent tree and what is wrong with the
// current one.
type staleTree struct {
	at      time.Time
	problem string
}

// note is what a gang's explanation (its decision and Event) adds when it was planned on the stale tree.
func (s *staleTree) note() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("; planned on the last consistent topology tree (read at %s), the current one being inconsistent: %s",
		s.at.UTC().Format(time.RFC3339), s.problem)
}

// fabric returns the fabric this pass places on: the current tree's when it is consistent, else the last
// consistent tree's with what is wrong with the current one (stale). An inconsistent tree with no consistent
// one read before is an *InconsistentTreeError; a failed read and ErrNoTopology are returned as they are. It
// logs each change between a current and a stale tree once, and keeps the metrics (fabricmap_placer_tree_stale,
// fabricmap_placer_tree_inconsistent_reads_total).
func (r *Reconciler) fabric(ctx context.Context, nodes []corev1.Node, now time.Time) (*placement.Fabric, *staleTree, error) {
	tree, err := ReadTree(ctx, r.Reader, r.Client, nodes)
	var f *placement.Fabric
	if err == nil {
		f, err = compileTree(tree)
	}
	last := &r.last
	switch {
	case err == nil:
		switch {
		case last.stale != "":
			r.Log.Info("the topology tree is consistent again: placing with it", "inconsistentFor", now.Sub(last.since).Round(time.Second).String(),
				"was", last.stale)
		case last.never:
			r.Log.Info("the topology tree is consistent: placing with it")
		}
		*last = lastTree{fabric: f, at: now}
		r.Metrics.treeStale.Set(0)
		return f, nil, nil
	case !inconsistentTree(err):
		if errors.Is(err, ErrNoTopology) && last.stale != "" {
			// No topology at all is no transition: nothing is placed (Reconcile says so), not on a stale tree.
			last.stale = ""
			r.Metrics.treeStale.Set(0)
		}
		return nil, nil, err
	}
	r.Metrics.treeInconsistent.Inc()
	if last.fabric == nil {
		last.never = true
		return nil, nil, &InconsistentTreeError{Err: err}
	}
	if last.stale == "" {
		last.since = now
		r.Log.Warn("the topology tree is inconsistent (the aggregator may be rewriting it): placing with the last consistent tree until it is consistent again",
			"err", err, "consistentAt", last.at.UTC().Format(time.RFC3339))
	} else {
		r.Log.Debug("the topology tree is still inconsistent: placing with the last consistent tree", "err", err,
			"consistentAt", last.at.UTC().Format(time.RFC3339))
	}
	last.stale = err.Error()
	r.Metrics.treeStale.Set(1)
	return last.fabric, &staleTree{at: last.at, problem: last.stale}, nil
}

// holdGangs tells every gated gang why it stays gated when the pass could read no tree: err names the
// inconsistency. A gang pinned already (a pass that stopped while ungating) needs no tree and is ungated. It
// returns how many gangs wait.
func (r *Reconciler) holdGangs(ctx context.Context, pods []corev1.Pod, err error) int {
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	gangs := pendingGangs(ptrs)
	waiting := 0
	for _, key := range r.order(gangs) {
		if allPinned(gangs[key]) {
			if r.ungateAll(ctx, key, gangs[key], nil, r.Log.With("gang", key)) != placed {
				waiting++
			}
			continue
		}
		waiting++
		var obj runtime.Object = gangs[key][0]
		if pg, pgErr := r.podGroup(ctx, key, gangs[key]); pgErr == nil && pg != nil {
			obj = pg
		}
		r.event(obj, corev1.EventTypeWarning, ReasonUnplaceable, "Place", "gang %s stays gated: %v", key, err)
	}
	return waiting
}
