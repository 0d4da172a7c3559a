package aggregator

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRewriteBaseline runs the rewrite guard's baseline and decision over passes: each step moves some of 32
// nodes (two leaves of 16) to the other leaf, or some of 10 HyperNodes under another parent, and says whether
// the pass writes and how many rewrites it counted. A change delivered over several passes within the guard's
// window is judged whole; changes that each settle for a window are judged alone.
func TestRewriteBaseline(t *testing.T) {
	hourly := DeletionGuard{MaxShare: 0.2, MinCount: 3, ConfirmAfter: time.Hour}
	adminOnly := DeletionGuard{MaxShare: 0.2, MinCount: 3}
	cases := []struct {
		name  string
		guard DeletionGuard
		steps []baselineStep
	}{
		{name: "one change in one pass is held", guard: hourly, steps: []baselineStep{{move: 16, wantResult: "hold 16"}}},
		{name: "the same change over passes of 1, 4, 3, 4 and 4 nodes is judged whole", guard: hourly, steps: []baselineStep{
			{move: 1, wantResult: "write 1"},
			{after: time.Second, move: 4, wantResult: "write 5"},
			{after: time.Second, move: 3, wantResult: "hold 8"},
			{after: time.Second, move: 4, wantResult: "hold 12"},
			{after: time.Second, move: 4, wantResult: "hold 16"},
		}},
		{name: "the same passes a window apart each settle and go through", guard: hourly, steps: []baselineStep{
			{move: 1, wantResult: "write 1"},
			{after: time.Hour, move: 4, wantResult: "write 4"},
			{after: time.Hour, move: 3, wantResult: "write 3"},
			{after: time.Hour, move: 4, wantResult: "write 4"},
			{after: time.Hour, move: 4, wantResult: "write 4"},
		}},
		{name: "a slow trickle, a node every 20 minutes, goes through", guard: hourly, steps: trickle(16, 20*time.Minute,
			func(i int) string { return fmt.Sprintf("write %d", min(i+1, 3)) })},
		{name: "a node moved and moved back counts nothing", guard: hourly, steps: []baselineStep{
			{move: 1, wantResult: "write 1"},
			{after: time.Second, back: []string{"n00"}, wantResult: "write 0"},
		}},
		{name: "an admin's confirmation makes the confirmed tree the baseline", guard: hourly, steps: []baselineStep{
			{move: 8, wantResult: "hold 8"},
			{after: time.Minute, confirm: true, wantResult: "write 8"},
			{after: time.Minute, move: 2, wantResult: "write 2"},
		}},
		{name: "a confirmed change stays the baseline while the cache shows the tree before", guard: hourly, steps: []baselineStep{
			{move: 8, wantResult: "hold 8"},
			{after: time.Minute, confirm: true, stale: true, wantResult: "write 8"},
			{after: time.Second, stale: true, wantResult: "write 0"},
			{after: time.Second, move: 2, wantResult: "write 2"},
		}},
		{name: "a change that persists for the window goes ahead, and is the baseline", guard: hourly, steps: []baselineStep{
			{move: 8, wantResult: "hold 8"},
			{after: time.Hour, wantResult: "write 8"},
			{after: time.Minute, move: 2, wantResult: "write 2"},
		}},
		{name: "a hold keeps the baseline: what was written before it still counts", guard: adminOnly, steps: []baselineStep{
			{move: 5, wantResult: "write 5"},
			{after: 10 * time.Minute, move: 3, wantResult: "hold 8"},
			{after: time.Hour, wantResult: "hold 8"},
			{after: 10 * time.Hour, wantResult: "hold 8"},
		}},
		{name: "HyperNodes moved over passes are judged whole too", guard: hourly, steps: []baselineStep{
			{moveHN: 2, wantResult: "write 2"},
			{after: time.Second, moveHN: 2, wantResult: "hold 4"},
		}},
	}
	t0 := time.Unix(1_800_000_000, 0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.guard
			written := baselineBed()
			want := cloneView(written)
			var s rewriteGuardState
			now := t0
			moved, movedHN := 0, 0
			var got, wantResults []string
			for _, st := range c.steps {
				now = now.Add(st.after)
				for range st.move {
					swapLeaf(want, fmt.Sprintf("n%02d", moved))
					moved++
				}
				for _, n := range st.back {
					swapLeaf(want, n)
				}
				for range st.moveHN {
					want.hyperNodes[fmt.Sprintf("hn-%d", movedHN)] = hyperNodePlace{tier: 1, parent: "spine-b"}
					movedHN++
				}
				counted := 0
				ok := s.judge(cloneView(want), written, now, g.window(), func(rw rewrites) bool {
					set := rw.set()
					counted = len(set)
					confirmedAt := func() time.Time {
						if st.confirm {
							return now
						}
						return time.Time{}
					}
					d, next := g.decide(s.guardState, set, len(set), g.tripsRewrites(rw), now, confirmedAt)
					s.guardState = next
					return d.Verdict != guardHold
				})
				verdict := "hold"
				if ok {
					verdict = "write"
					if !st.stale {
						written = cloneView(want)
					}
				}
				got = append(got, fmt.Sprintf("%s %d", verdict, counted))
				wantResults = append(wantResults, st.wantResult)
			}
			if diff := cmp.Diff(wantResults, got); diff != "" {
				t.Errorf("passes (-want +got):\n%s", diff)
			}
		})
	}
}

// baselineStep is one pass of TestRewriteBaseline.
type baselineStep struct {
	after      time.Duration // since the step before
	move       int           // nodes moved to the other leaf, the next ones in order
	moveHN     int           // HyperNodes moved under another parent, the next ones in order
	back       []string      // nodes moved back to the leaf they came from
	confirm    bool          // an admin confirms at this step
	stale      bool          // what the pass writes is not yet seen as written at the next (a cache that lags)
	wantResult string        // "write N" or "hold N": the verdict, and the rewrites counted
}

// trickle is n steps of one node each, every so long, each expecting result(i).
func trickle(n int, every time.Duration, result func(i int) string) []baselineStep {
	steps := make([]baselineStep, n)
	for i := range steps {
		steps[i] = baselineStep{after: every, move: 1, wantResult: result(i)}
	}
	return steps
}

// baselineBed is the tree the baseline test starts from: nodes n00 to n15 behind leaf a, n16 to n31 behind leaf
// b, and HyperNodes hn-0 to hn-9 of tier 1 under spine-a.
func baselineBed() treeView {
	v := treeView{hyperNodes: map[string]hyperNodePlace{}, nodes: map[string]map[string]string{}}
	for i := range 32 {
		leaf := "a"
		if i >= 16 {
			leaf = "b"
		}
		v.nodes[fmt.Sprintf("n%02d", i)] = map[string]string{"leaf": leaf, "spine": "s"}
	}
	for i := range 10 {
		v.hyperNodes[fmt.Sprintf("hn-%d", i)] = hyperNodePlace{tier: 1, parent: "spine-a"}
	}
	return v
}

// swapLeaf moves node to the other leaf.
func swapLeaf(v treeView, node string) {
	l := maps.Clone(v.nodes[node])
	l["leaf"] = map[string]string{"a": "b", "b": "a"}[l["leaf"]]
	v.nodes[node] = l
}

func cloneView(v treeView) treeView {
	return treeView{hyperNodes: maps.Clone(v.hyperNodes), nodes: maps.Clone(v.nodes)}
}
