package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChooseItems pins the choice of a level's members: the fewest that hold the units, then the fullest
// such set the swaps reach, the units going to the largest first.
func TestChooseItems(t *testing.T) {
	cases := []struct {
		name string
		capa []int
		pods []int64 // free pods, the tie-break among equal capacities; capa when nil
		need int
		want []int // take per item, in the order given
	}{
		{"keeps the whole leaf", []int{32, 30, 20}, nil, 40, []int{0, 30, 10}},
		{"a fuller pair", []int{5, 3, 3}, nil, 6, []int{0, 3, 3}},
		{"an exact fit stays", []int{4, 4}, nil, 8, []int{4, 4}},
		{"one holds it all", []int{10, 2, 1}, nil, 3, []int{3, 0, 0}},
		{"equal capacity: fewer free pods", []int{2, 2}, []int64{5, 3}, 2, []int{0, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items := make([]item, len(tc.capa))
			for i, c := range tc.capa {
				items[i] = item{idx: int32(i), capa: c, pods: int64(c)}
				if tc.pods != nil {
					items[i].pods = tc.pods[i]
				}
			}
			sortItems(items)
			chooseItems(items, tc.need)
			got := make([]int, len(items))
			for _, it := range items {
				got[it.idx] = it.take
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("takes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChooseItemsFewest checks on random capacities that the choice places exactly the units, within each
// item's capacity, on the fewest items any subset needs (found by enumeration).
func TestChooseItemsFewest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 3000 {
		n := 1 + rng.IntN(7)
		items := make([]item, n)
		sum := 0
		for i := range items {
			c := 1 + rng.IntN(10)
			items[i] = item{idx: int32(i), capa: c, pods: int64(c + rng.IntN(3))}
			sum += c
		}
		need := 1 + rng.IntN(sum)
		fewest := n
		for mask := 1; mask < 1<<n; mask++ {
			s, k := 0, 0
			for i := range items {
				if mask&(1<<i) != 0 {
					s, k = s+items[i].capa, k+1
				}
			}
			if s >= need {
				fewest = min(fewest, k)
			}
		}
		sortItems(items)
		desc := fmt.Sprintf("case %d: items %+v need %d", it, items, need)
		chooseItems(items, need)
		placed, used := 0, 0
		for _, x := range items {
			if x.take < 0 || x.take > x.capa {
				t.Fatalf("%s: take %d outside [0, %d]", desc, x.take, x.capa)
			}
			if x.take > 0 {
				placed, used = placed+x.take, used+1
			}
		}
		if placed != need || used != fewest {
			t.Fatalf("%s: placed %d on %d items, want %d on %d", desc, placed, used, need, fewest)
		}
	}
}

// TestPooledFill checks that the greedy fill chooses each level among the children of all the members
// chosen above it: 8 pods over two spines take the two 4-node leaves, not spine s1 whole (three leaves) and
// the rest in s2.
func TestPooledFill(t *testing.T) {
	tr := mkTree(t, "root/3: s1 s2", "s1/2: a b c", "s2/2: d e",
		"a/1: a1 a2 a3 a4", "b/1: b1 b2", "c/1: c1 c2", "d/1: d1 d2 d3 d4", "e/1: e1")
	c := mkCluster(t, tr, 1, busyExcept(tr, "a1", "a2", "a3", "a4", "b1", "c1", "d1", "d2", "d3", "d4"))
	for _, tc := range []struct {
		name string
		pp   int
	}{{"pods", 1}, {"groups of 2", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gang{Name: "g", Pods: 8, PP: tc.pp, Request: Resources{gpu: 1}}
			sn, err := c.snapshotFor(&g)
			if err != nil {
				t.Fatal(err)
			}
			defer sn.release()
			root := c.fabric.byName["root"]
			var picks []pick
			if tc.pp == 1 {
				picks = sn.fill(root, 8, -1, nil)
			} else {
				picks = sn.fill(root, 4, 1, nil)
			}
			pods := 0
			for _, p := range picks {
				if p.pods > int(sn.slots[p.node]) {
					t.Fatalf("node %s gets %d pods, has %d slots", c.fabric.nodes[p.node], p.pods, sn.slots[p.node])
				}
				pods += p.pods
			}
			if got, _ := sn.counts(root, picks, nil); pods != 8 || !slices.Equal(got, []int{2, 2, 8}) {
				t.Errorf("%d pods, domains used per tier %v; want 8 pods on 2 spines, 2 leaves, 8 nodes", pods, got)
			}
		})
	}
}
