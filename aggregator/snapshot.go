package aggregator

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view/web"
)

// TreeSnapshot holds the last tree the Reconciler built, with the evidence it rejected, for readers in other
// goroutines (the aggregator's web page). It is safe for concurrent use; a nil *TreeSnapshot ignores Set.
type TreeSnapshot struct {
	mu        sync.RWMutex
	tree      *topology.Tree
	problems  []topology.Problem
	conflicts []topology.Conflict
	pending   []topology.Conflict
	built     time.Time
}

// RecordConflict notes that two sources disagreed about a node while the next tree was being built; the next
// Set publishes it with that tree. A nil *TreeSnapshot ignores it.
func (s *TreeSnapshot) RecordConflict(c topology.Conflict) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, c)
}

// Set stores a copy of tree and problems, built at the given time, with the conflicts recorded since the last Set.
func (s *TreeSnapshot) Set(tree *topology.Tree, problems []topology.Problem, built time.Time) {
	if s == nil {
		return
	}
	t := copyTree(tree)
	p := slices.Clone(problems)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tree, s.problems, s.built = t, p, built
	s.conflicts, s.pending = s.pending, nil
}

// Get returns the last tree (nil before the first Set), the problems found building it and when it was built.
// The caller must not modify them.
func (s *TreeSnapshot) Get() (*topology.Tree, []topology.Problem, time.Time) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree, s.problems, s.built
}

// WebState returns the snapshot as the web page shows it: the tree, its nodes without topology, and as
// conflicts the rejected evidence and the sources that disagreed.
func (s *TreeSnapshot) WebState() web.State {
	s.mu.RLock()
	t, problems, conflicts, built := s.tree, s.problems, s.conflicts, s.built
	s.mu.RUnlock()
	st := web.State{Tree: t, Conflicts: web.ConflictsFromProblems(problems), Updated: built}
	for _, c := range conflicts {
		st.Conflicts = append(st.Conflicts, web.Conflict{Node: c.Node, Source: c.Dropped,
			Reason: fmt.Sprintf("sources %s and %s place the node behind different switches; %s wins (higher priority)", c.Kept, c.Dropped, c.Kept)})
	}
	if t != nil {
		st.Unplaced = t.Unplaced
	}
	return st
}

// copyTree returns a deep copy of t, so that a reader never sees a tree the reconciler still works on.
func copyTree(t *topology.Tree) *topology.Tree {
	if t == nil {
		return nil
	}
	out := &topology.Tree{Domains: make(map[string]*topology.Domain, len(t.Domains)), Unplaced: slices.Clone(t.Unplaced)}
	for name, d := range t.Domains {
		c := *d
		c.Children, c.Nodes, c.Switches = slices.Clone(d.Children), slices.Clone(d.Nodes), slices.Clone(d.Switches)
		out.Domains[name] = &c
	}
	return out
}
