package aggregator

import (
	"maps"
	"time"
)

// defaultRewriteWindow is the rewrite guard's window when DeletionGuard.ConfirmAfter is zero (only an admin
// confirms): the flag's default.
const defaultRewriteWindow = time.Hour

// window is how long the rewrite guard counts rewrites together: ConfirmAfter, the time a held change must
// persist to go ahead by itself, or defaultRewriteWindow when only an admin confirms.
func (g DeletionGuard) window() time.Duration {
	if g.ConfirmAfter > 0 {
		return g.ConfirmAfter
	}
	return defaultRewriteWindow
}

// rewriteGuardState is what the rewrite guard keeps between passes: its hold, as the deletion guard's, and the
// baseline its rewrites are counted against.
type rewriteGuardState struct {
	guardState
	baseline rewriteBaseline
}

// rewriteBaseline is the tree the rewrite guard counts a pass's rewrites against: the tree as written, but for
// what was rewritten within the guard's window, which counts as it stood before. So one change the watches
// deliver in several passes (a kubectl apply of many reports) is judged whole, while changes that each settle
// for a window (a recabling, one rack a day) are judged one by one. It holds only the rewritten HyperNodes and
// nodes: each one's place or topology labels from before its first rewrite in the window, and when it was last
// rewritten. An entry leaves once its HyperNode or node has stayed unrewritten for the window, never while a
// hold is on; a confirmed change becomes the baseline at once.
type rewriteBaseline struct {
	hyperNodes map[string]baselineEntry[hyperNodePlace]
	nodes      map[string]baselineEntry[map[string]string]
}

// baselineEntry is one rewritten HyperNode's or node's value in the baseline, and when it was last rewritten.
type baselineEntry[T any] struct {
	was T
	at  time.Time
}

// judge runs one pass of the rewrite guard: the rewrites of want are counted against the baseline over
// written (the tree as written) and judged by decide, which says whether the pass may write; when it may, what
// it writes enters the baseline, and a confirmed set (decide left state.confirmed set) becomes the baseline.
func (s *rewriteGuardState) judge(want, written treeView, now time.Time, window time.Duration, decide func(rewrites) bool) bool {
	if s.held == nil { // a hold keeps the baseline where it began: nothing settles while the change waits
		settle(s.baseline.hyperNodes, now, window)
		settle(s.baseline.nodes, now, window)
	}
	rw := findRewrites(want, s.baseline.over(written))
	if !decide(rw) {
		return false
	}
	wrote := findRewrites(want, written) // what this pass changes of the tree as written
	s.baseline.hyperNodes = note(s.baseline.hyperNodes, wrote.hyperNodes, written.hyperNodes, now)
	s.baseline.nodes = note(s.baseline.nodes, wrote.nodes, written.nodes, now)
	if s.confirmed != nil {
		// The confirmed tree is the baseline from now on, whatever the cache still shows of the tree before.
		s.baseline.hyperNodes = rebase(s.baseline.hyperNodes, rw.hyperNodes, want.hyperNodes, now)
		s.baseline.nodes = rebase(s.baseline.nodes, rw.nodes, want.nodes, now)
	}
	return true
}

// over is the tree the baseline stands for: written, with the values of what was rewritten within the window
// as they were before. HyperNodes and nodes no longer written are left out.
func (b rewriteBaseline) over(written treeView) treeView {
	return treeView{hyperNodes: overlay(written.hyperNodes, b.hyperNodes), nodes: overlay(written.nodes, b.nodes)}
}

// overlay returns written with base's values over the same names.
func overlay[T any](written map[string]T, base map[string]baselineEntry[T]) map[string]T {
	if len(base) == 0 {
		return written
	}
	out := maps.Clone(written)
	for n, e := range base {
		if _, ok := out[n]; ok {
			out[n] = e.was
		}
	}
	return out
}

// settle drops the entries unrewritten for window: their values as written are the baseline now.
func settle[T any](base map[string]baselineEntry[T], now time.Time, window time.Duration) {
	maps.DeleteFunc(base, func(_ string, e baselineEntry[T]) bool { return now.Sub(e.at) >= window })
}

// note records the names rewritten at now: a name new to base keeps its value as written before, a known one
// its value from before its first rewrite in the window.
func note[T any](base map[string]baselineEntry[T], names []string, written map[string]T, now time.Time) map[string]baselineEntry[T] {
	if len(names) > 0 && base == nil {
		base = map[string]baselineEntry[T]{}
	}
	for _, n := range names {
		e, ok := base[n]
		if !ok {
			e.was = written[n]
		}
		e.at = now
		base[n] = e
	}
	return base
}

// rebase makes the wanted values of names the baseline, as of now.
func rebase[T any](base map[string]baselineEntry[T], names []string, want map[string]T, now time.Time) map[string]baselineEntry[T] {
	if len(names) > 0 && base == nil {
		base = map[string]baselineEntry[T]{}
	}
	for _, n := range names {
		base[n] = baselineEntry[T]{was: want[n], at: now}
	}
	return base
}
