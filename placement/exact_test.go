package placement

import (
	"fmt"
	"strings"
	"testing"
)

// TestExactBudget checks when a fill too large for the size rule still runs exactly: when its knapsack work
// fits in what is left of the search's budget, which it then spends.
func TestExactBudget(t *testing.T) {
	// 4 spines of 8 leaves of 40 nodes: 1,317 members, so 32 pods are past the size rule (x 32^2 > 2^20);
	// with 2 free nodes in each leaf of two spines the knapsack itself is small.
	lines := []string{"root/3: s0 s1 s2 s3"}
	var free []string
	for s := range 4 {
		var leaves []string
		for l := range 8 {
			name := fmt.Sprintf("l%d%d", s, l)
			leaves = append(leaves, name)
			var nodes []string
			for n := range 40 {
				nodes = append(nodes, fmt.Sprintf("n%d%d-%02d", s, l, n))
			}
			lines = append(lines, name+"/1: "+strings.Join(nodes, " "))
			if s < 2 {
				free = append(free, nodes[:2]...)
			}
		}
		lines = append(lines, fmt.Sprintf("s%d/2: %s", s, strings.Join(leaves, " ")))
	}
	tr := mkTree(t, lines...)
	c := mkCluster(t, tr, 1, busyExcept(tr, free...))
	g := Gang{Name: "g", Pods: 32, Request: Resources{gpu: 1}}
	for _, tc := range []struct {
		name  string
		spent int64
		want  bool
	}{{"budget left", 0, true}, {"budget spent", exactBudget - 100, false}} {
		t.Run(tc.name, func(t *testing.T) {
			sn, err := c.snapshotFor(&g)
			if err != nil {
				t.Fatal(err)
			}
			defer sn.release()
			root := c.fabric.byName["root"]
			dd := &c.fabric.domains[root]
			if size := int64(dd.hi-dd.lo) + int64(dd.below); size*32*32 <= exactWork {
				t.Fatalf("the fabric is small enough for the size rule (%d members)", size)
			}
			sn.exactSpent = tc.spent
			cost := sn.exactCost(root, 32, exactBudget)
			if got := sn.exactFits(root, 32); got != tc.want {
				t.Fatalf("exactFits = %v with %d of %d spent (cost %d), want %v", got, tc.spent, exactBudget, cost, tc.want)
			}
			wantSpent := tc.spent
			if tc.want {
				wantSpent += cost
			}
			if sn.exactSpent != wantSpent {
				t.Errorf("spent %d, want %d", sn.exactSpent, wantSpent)
			}
		})
	}
}
