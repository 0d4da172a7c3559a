package aggregator

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/view/web"
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

// TestPublishSnapshot: what the reconciler knew around a tree reaches the page: the cluster's nodes (one
// without a report is listed as such), the reports expired and dropped, the expiry's suspension, each source's
// health, and a stale source's last success from an earlier pass.
func TestPublishSnapshot(t *testing.T) {
	tree, _ := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
		{Node: "n2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
	}}, topology.BuildOptions{})
	nodes := map[string]*metav1.PartialObjectMetadata{}
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		nodes[n] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	reports := []*v1alpha1.NodeFabricReport{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n4"}}}
	first, second := time.Unix(1_800_000_000, 0), time.Unix(1_800_000_060, 0)
	ufm := &polledSource{src: &staticSource{name: "ufm"}, good: true, taken: true, attempt: first}
	capture := &polledSource{src: &staticSource{name: "capture"}}
	r := &Reconciler{Snapshot: &TreeSnapshot{}, polls: pollStage{polled: []*polledSource{ufm, capture}},
		inputs: evidenceStage{ages: map[string]reportAge{"n2": reportExpired, "n4": reportDropped}}}
	r.publishSnapshot(tree, nil, nodes, reports, first)
	if got := r.Snapshot.WebState().Sources[0].LastSuccess; !got.Equal(first) {
		t.Fatalf("ufm's last success %v, want %v", got, first)
	}

	// The next pass: UFM's poll fails, the capture's is held back by its shrink guard, most agents are silent.
	ufm.lastErr, ufm.attempt = errors.New("source ufm: 503\x1b[0m"), second
	capture.good, capture.taken, capture.attempt, capture.held = true, true, second, &shrinkHold{gone: []string{"n1", "n2"}}
	r.inputs.expirySuspended = true
	r.publishSnapshot(tree, nil, nodes, reports, second)
	got := r.Snapshot.WebState()
	want := web.State{
		Nodes: []string{"n1", "n2", "n3", "n4"}, Reports: []string{"n1", "n2", "n4"},
		Expired: []string{"n2"}, Dropped: []string{"n4"}, ExpirySuspended: true,
		Sources: []web.SourceHealth{
			{Name: "ufm", Ready: true, Stale: true, Error: `source ufm: 503\x1b[0m`, LastSuccess: first},
			{Name: "capture", Ready: true, LastSuccess: second, Held: 2},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(web.State{}, "Tree", "Unplaced", "Conflicts", "Updated")); diff != "" {
		t.Errorf("web state (-want +got):\n%s", diff)
	}

	// A Set without them (a caller that knows nothing around the tree) leaves the page without them.
	r.Snapshot.Set(tree, nil, second)
	if st := r.Snapshot.WebState(); st.Nodes != nil || st.Sources != nil {
		t.Errorf("after a plain Set the page still has nodes %v, sources %v", st.Nodes, st.Sources)
	}
	(&Reconciler{}).publishSnapshot(tree, nil, nodes, reports, second) // without a snapshot: nothing, no panic
}
