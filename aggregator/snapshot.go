package aggregator

import (
	"slices"
	"sync"
	"time"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view/web"
)

// TreeSnapshot holds the last tree the Reconciler built, with the evidence it rejected, for readers in other
// goroutines (the aggregator's web page). It is safe for concurrent use; a nil *TreeSnapshot ignores Set.
type TreeSnapshot struct {
	mu       sync.RWMutex
	tree     *topology.Tree
	problems []topology.Problem
	built    time.Time
}

// Set stores a copy of tree and problems, built at the given time.
func (s *TreeSnapshot) Set(tree *topology.Tree, problems []topology.Problem, built time.Time) {
	if s == nil {
		return
	}
	t := copyTree(tree)
	p := slices.Clone(problems)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tree, s.problems, s.built = t, p, built
}

// Get returns the last tree (nil before the first Set), the problems found building it and when it was built.
// The caller must not modify them.
func (s *TreeSnapshot) Get() (*topology.Tree, []topology.Problem, time.Time) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree, s.problems, s.built
}

// WebState returns the snapshot as the web page shows it: the tree, its nodes without topology and the
// rejected evidence as conflicts.
func (s *TreeSnapshot) WebState() web.State {
	t, problems, built := s.Get()
	st := web.State{Tree: t, Conflicts: web.ConflictsFromProblems(problems), Updated: built}
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
