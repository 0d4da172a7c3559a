package aggregator

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view/web"
)

// TreeSnapshot holds the last tree the Reconciler built, with the evidence it rejected and what it knew around
// it (the cluster's nodes, the reports' ages, the sources' health), for readers in other goroutines (the
// aggregator's web page). It is safe for concurrent use; a nil *TreeSnapshot ignores Set.
type TreeSnapshot struct {
	mu        sync.RWMutex
	tree      *topology.Tree
	problems  []topology.Problem
	conflicts []topology.Conflict
	pending   []topology.Conflict
	built     time.Time
	around    *surroundings // nil when the last Set came without them
	// lastSuccess is when each source was last read successfully, kept across passes: a stale source's is
	// what the page shows.
	lastSuccess map[string]time.Time
}

// surroundings is what the reconciler knew around a tree when it built it.
type surroundings struct {
	nodes, reports, expired, dropped []string
	expirySuspended                  bool
	sources                          []web.SourceHealth
	findings                         []health.Finding // fabric health's, worst first
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

// Set stores a copy of tree and problems, built at the given time, with the conflicts recorded since the last
// Set; the page then knows nothing around the tree (see publishSnapshot).
func (s *TreeSnapshot) Set(tree *topology.Tree, problems []topology.Problem, built time.Time) {
	s.set(tree, problems, built, nil)
}

func (s *TreeSnapshot) set(tree *topology.Tree, problems []topology.Problem, built time.Time, around *surroundings) {
	if s == nil {
		return
	}
	t := copyTree(tree)
	p := slices.Clone(problems)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tree, s.problems, s.built, s.around = t, p, built, around
	s.conflicts, s.pending = s.pending, nil
	if around == nil {
		return
	}
	if s.lastSuccess == nil {
		s.lastSuccess = map[string]time.Time{}
	}
	for i := range around.sources {
		src := &around.sources[i]
		if src.LastSuccess.IsZero() {
			src.LastSuccess = s.lastSuccess[src.Name]
		} else {
			s.lastSuccess[src.Name] = src.LastSuccess
		}
	}
}

// Get returns the last tree (nil before the first Set), the problems found building it and when it was built.
// The caller must not modify them.
func (s *TreeSnapshot) Get() (*topology.Tree, []topology.Problem, time.Time) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree, s.problems, s.built
}

// WebState returns the snapshot as the web page shows it: the tree, its nodes without topology, as conflicts
// the rejected evidence and the sources that disagreed, and what was known around the tree.
func (s *TreeSnapshot) WebState() web.State {
	s.mu.RLock()
	t, problems, conflicts, built, around := s.tree, s.problems, s.conflicts, s.built, s.around
	s.mu.RUnlock()
	st := web.State{Tree: t, Conflicts: web.ConflictsFromProblems(problems), Updated: built}
	for _, c := range conflicts {
		st.Conflicts = append(st.Conflicts, web.Conflict{Node: c.Node, Source: c.Dropped,
			Reason: fmt.Sprintf("sources %s and %s place the node behind different switches; %s wins (higher priority)", c.Kept, c.Dropped, c.Kept)})
	}
	if t != nil {
		st.Unplaced = t.Unplaced
	}
	if around != nil {
		st.Nodes, st.Reports, st.Expired, st.Dropped = around.nodes, around.reports, around.expired, around.dropped
		st.ExpirySuspended, st.Sources, st.Findings = around.expirySuspended, around.sources, around.findings
	}
	return st
}

// publishSnapshot hands the web page the tree just built and the evidence it could not use, with what this
// pass knew around it: the cluster's nodes (so that the page lists those without any report), which have a
// report, the reports expired or dropped, how each source's polls fare and fabric health's findings.
// Reconcile calls it once the tree has its names and its health is assessed.
func (r *Reconciler) publishSnapshot(tree *topology.Tree, problems []topology.Problem, nodes map[string]*metav1.PartialObjectMetadata,
	reports []*v1alpha1.NodeFabricReport, built time.Time) {
	if r.Snapshot == nil {
		return
	}
	around := &surroundings{nodes: slices.Sorted(maps.Keys(nodes)), reports: make([]string, 0, len(reports)), expired: []string{},
		dropped: []string{}, expirySuspended: r.inputs.expirySuspended, sources: []web.SourceHealth{},
		findings: slices.Clone(r.health.fabricHealth.last.Findings)}
	for i := range reports {
		around.reports = append(around.reports, reports[i].Name)
	}
	for n, a := range r.inputs.ages {
		switch a {
		case reportExpired:
			around.expired = append(around.expired, n)
		case reportDropped:
			around.dropped = append(around.dropped, n)
		}
	}
	slices.Sort(around.expired)
	slices.Sort(around.dropped)
	for _, p := range r.stagePoll().sourceList() {
		h := web.SourceHealth{Name: p.src.Name(), Ready: p.good, Stale: p.lastErr != nil}
		if p.lastErr != nil {
			h.Error = topology.Printable(p.lastErr.Error())
		} else if p.taken {
			h.LastSuccess = p.attempt
		}
		if p.held != nil {
			h.Held = len(p.held.gone)
		}
		around.sources = append(around.sources, h)
	}
	r.Snapshot.set(tree, problems, built, around)
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
