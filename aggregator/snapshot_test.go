package aggregator

import (
	"sync"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

func TestTreeSnapshot(t *testing.T) {
	tree, _ := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
		{Node: "n2"},
	}}, topology.BuildOptions{})
	problems := []topology.Problem{{Node: "n3", Source: "reports", Reason: "no links"}}
	built := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		set       bool
		wantReady bool
		unplaced  int
		conflicts int
	}{
		{"before the first tree", false, false, 0, 0},
		{"after Set", true, true, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &TreeSnapshot{}
			s.RecordConflict(topology.Conflict{Node: "n1", Kept: "reports", Dropped: "ufm"})
			if tc.set {
				s.Set(tree, problems, built)
			}
			st := s.WebState()
			if (st.Tree != nil) != tc.wantReady || len(st.Unplaced) != tc.unplaced || len(st.Conflicts) != tc.conflicts {
				t.Fatalf("state %+v", st)
			}
			if tc.set {
				tree.Domains["leaf-a"].Nodes[0] = "changed"
				if got, _, _ := s.Get(); got.Domains["leaf-a"].Nodes[0] != "n1" || !st.Updated.Equal(built) {
					t.Error("the snapshot shares memory with the tree it was given")
				}
				tree.Domains["leaf-a"].Nodes[0] = "n1"
			}
		})
	}
	var nilSnapshot *TreeSnapshot
	nilSnapshot.Set(tree, nil, built) // a Reconciler without a snapshot must not panic
	nilSnapshot.RecordConflict(topology.Conflict{})

	s := &TreeSnapshot{}
	s.RecordConflict(topology.Conflict{Node: "n1", Kept: "reports", Dropped: "ufm"})
	s.Set(tree, nil, built)
	s.Set(tree, nil, built)
	if c := s.WebState().Conflicts; len(c) != 0 {
		t.Errorf("a conflict outlived the pass it was recorded in: %+v", c)
	}

	s = &TreeSnapshot{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0:
				s.Set(tree, problems, built)
			case 1:
				s.RecordConflict(topology.Conflict{Node: "n1"})
			default:
				_ = s.WebState()
			}
		}()
	}
	wg.Wait()
}
