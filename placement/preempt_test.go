package placement

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
)

// koordSeedTree is the 12-node fabric of the Koordinator seed's preemption example.
func koordSeedTree(t testing.TB) *Cluster {
	tr := mkTree(t,
		"spine/3/spine: leaf0 leaf1",
		"leaf0/2/leaf: unit0 unit1", "leaf1/2/leaf: unit2 unit3",
		"unit0/1/unit: node0 node1", "unit1/1/unit: node2 node3",
		"unit2/1/unit: node4 node5 node6 node7", "unit3/1/unit: node8 node9 node10 node11")
	return mkCluster(t, tr, 1, nil)
}

// TestKoordinatorSeedExample replays the seed's three PodGroups: 1 and 2 take Unit2 and Unit3, 3 preempts both
// and lands on node4-11 with each PP group inside one unit.
func TestKoordinatorSeedExample(t *testing.T) {
	c := koordSeedTree(t)
	req := Resources{gpu: 1}
	for i, want := range []string{"unit2", "unit3"} {
		g := Gang{Name: []string{"podgroup1", "podgroup2"}[i], Pods: 4, DP: 2, PP: 2, Request: req, Preemptible: true}
		p, err := c.Preempt(g)
		if err != nil {
			t.Fatal(err)
		}
		if p.GangDomain != want || len(p.Victims) > 0 {
			t.Fatalf("%s went to %s (victims %v), want %s: %s", g.Name, p.GangDomain, p.Victims, want, p.Explanation)
		}
		if err := c.Bind(p, g); err != nil {
			t.Fatal(err)
		}
	}
	g3 := Gang{Name: "podgroup3", Pods: 8, DP: 2, PP: 4, Request: req, Priority: 1}
	if _, err := c.Place(g3); !errors.Is(err, ErrNoPlacement) {
		t.Fatalf("podgroup3 should not fit on free capacity, got %v", err)
	}
	p, err := c.Preempt(g3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Victims, []string{"podgroup1", "podgroup2"}) {
		t.Errorf("victims %v, want podgroup1 and podgroup2", p.Victims)
	}
	want := []string{"node4", "node5", "node6", "node7", "node8", "node9", "node10", "node11"}
	if got := slices.Sorted(slices.Values(p.Ranks)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("nodes %v, want node4-11", got)
	}
	if !slices.Equal(p.Groups, []string{"unit2", "unit3"}) || p.GroupTier != 1 || p.GangDomain != "leaf1" {
		t.Errorf("groups %v (tier %d) in %s, want unit2 and unit3 (tier 1) in leaf1: %s", p.Groups, p.GroupTier, p.GangDomain, p.Explanation)
	}
}

// TestPreemptRules covers who may be a victim and how options are ordered.
func TestPreemptRules(t *testing.T) {
	req := Resources{gpu: 1}
	on := func(nodes ...string) map[string]int {
		m := map[string]int{}
		for _, n := range nodes {
			m[n]++
		}
		return m
	}
	cases := []struct {
		name    string
		running []Running
		gang    Gang
		victims []string
		err     error
	}{
		{"free capacity first: no victim", []Running{{Name: "a", Preemptible: true, Pods: on("node4", "node5"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, nil, nil},
		{"non-preemptible is never a victim", []Running{{Name: "a", Pods: on("node4", "node5", "node6", "node7", "node8", "node9", "node10", "node11", "node0", "node1", "node2", "node3"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, nil, ErrNoPreemption},
		{"equal priority is never a victim", []Running{{Name: "a", Preemptible: true, Priority: 1, Pods: on("node4", "node5", "node6", "node7", "node8", "node9", "node10", "node11", "node0", "node1", "node2", "node3"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, nil, ErrNoPreemption},
		{"fewest victims at the best tier", []Running{
			{Name: "big", Preemptible: true, Pods: on("node4", "node5", "node6", "node7"), Request: req},
			{Name: "s1", Preemptible: true, Pods: on("node8", "node9"), Request: req},
			{Name: "s2", Preemptible: true, Pods: on("node10", "node11"), Request: req},
			{Name: "x", Pods: on("node0", "node1", "node2", "node3"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, []string{"big"}, nil},
		{"fewest GPU-hours among equal counts", []Running{
			{Name: "costly", Preemptible: true, Pods: on("node4", "node5", "node6", "node7"), Request: req, GPUHours: 90},
			{Name: "cheap", Preemptible: true, Pods: on("node8", "node9", "node10", "node11"), Request: req, GPUHours: 10},
			{Name: "x", Pods: on("node0", "node1", "node2", "node3"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, []string{"cheap"}, nil},
		{"a lower tier beats fewer victims", []Running{
			{Name: "a", Preemptible: true, Pods: on("node4", "node5"), Request: req},
			{Name: "b", Preemptible: true, Pods: on("node6", "node7"), Request: req},
			{Name: "c", Preemptible: true, Pods: on("node0", "node2"), Request: req},
			{Name: "x", Pods: on("node1", "node3", "node8"), Request: req}},
			Gang{Name: "g", Pods: 4, Priority: 1, Request: req}, []string{"a", "b"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := koordSeedTree(t)
			for _, r := range tc.running {
				if err := c.AddRunning(r, true); err != nil {
					t.Fatal(err)
				}
			}
			before := slices.Clone(c.used[0])
			p, err := c.Preempt(tc.gang)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if !slices.Equal(c.used[0], before) {
				t.Fatalf("Preempt changed the cluster")
			}
			if err != nil {
				return
			}
			if !slices.Equal(p.Victims, tc.victims) {
				t.Errorf("victims %v, want %v: %s", p.Victims, tc.victims, p.Explanation)
			}
		})
	}
}

// TestPreemptAgainstExhaustive checks on seeded random small fabrics that Preempt reaches the best gang tier
// and group tier that evicting any subset of the eligible gangs allows, and at those tiers evicts the fewest
// gangs, then the fewest GPU-hours, that any subset needs (in every case: the search is exact); that it
// evicts only eligible gangs, and never preempts when the gang fits on free capacity.
func TestPreemptAgainstExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	iterations := 1500
	if testing.Short() {
		iterations = 150
	}
	preempted := 0
	for it := range iterations {
		tr, _ := randomFabric(rng, 2+rng.IntN(5))
		c := mkCluster(t, tr, 3, nil)
		nodes := c.fabric.Nodes()
		var running []Running
		for i := range 1 + rng.IntN(7) {
			pods := map[string]int{}
			for range 1 + rng.IntN(3) {
				n := nodes[rng.IntN(len(nodes))]
				if c.Free(n, gpu) > 0 {
					pods[n]++
				}
			}
			if len(pods) == 0 {
				continue
			}
			r := Running{Name: fmt.Sprintf("r%d", i), Priority: int32(rng.IntN(3)), Preemptible: rng.IntN(4) > 0, Pods: pods, Request: Resources{gpu: 1}, GPUHours: float64(rng.IntN(10))}
			if err := c.AddRunning(r, true); err != nil {
				t.Fatal(err)
			}
			ok := true
			for n := range pods {
				ok = ok && c.Free(n, gpu) >= 0
			}
			if !ok {
				_ = c.Remove(r.Name)
				continue
			}
			running = append(running, r)
		}
		m := 1 + rng.IntN(5)
		if m > 3*len(nodes) {
			continue
		}
		g := Gang{Name: "g", Pods: m, PP: []int{1, m}[rng.IntN(2)], Priority: 2, Request: Resources{gpu: 1}}
		if m%2 == 0 && rng.IntN(2) == 0 {
			g.PP = 2
		}
		var eligible []Running
		for _, r := range running {
			if r.Preemptible && r.Priority < g.Priority {
				eligible = append(eligible, r)
			}
		}
		want := exhaustiveVictims(tr, c, nodes, eligible, g)
		desc := fmt.Sprintf("iteration %d: tree %v running %+v gang %+v", it, tr.Outline(), running, g)
		p, err := c.Preempt(g)
		if !want.ok {
			if err == nil {
				t.Fatalf("%s: no subset of victims makes room, Preempt gives %+v", desc, p)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: exhaustive finds %+v, Preempt fails: %v", desc, want, err)
		}
		hours := 0.0
		for _, v := range p.Victims {
			i := slices.IndexFunc(eligible, func(r Running) bool { return r.Name == v })
			if i < 0 {
				t.Fatalf("%s: victim %s is not eligible", desc, v)
			}
			hours += eligible[i].GPUHours
		}
		if p.GangTier != want.gangTier || p.GroupTier != want.groupTier {
			t.Fatalf("%s: got tiers (%d, %d) with victims %v, exhaustive best %+v", desc, p.GangTier, p.GroupTier, p.Victims, want)
		}
		if len(p.Victims) != want.victims || hours != want.hours {
			t.Fatalf("%s: %d victims %v (%g GPU-hours), exhaustive best %d (%g GPU-hours)", desc, len(p.Victims), p.Victims, hours, want.victims, want.hours)
		}
		if len(p.Victims) > 0 {
			preempted++
		}
	}
	t.Logf("%d preemptions, each with the fewest victims and GPU-hours possible", preempted)
	if preempted < iterations/20 {
		t.Fatalf("only %d preemptions in %d cases: the generator is too loose", preempted, iterations)
	}
}

// victimBest is the exhaustive search's best preemption: tiers, then victim count, then GPU-hours.
type victimBest struct {
	gangTier, groupTier, victims int
	hours                        float64
	ok                           bool
}

// exhaustiveVictims tries every subset of the eligible gangs (none first: a gang that fits on free capacity
// preempts nothing) and returns the best by gang tier, group tier, victim count, then GPU-hours.
func exhaustiveVictims(tr *topology.Tree, c *Cluster, nodes []string, eligible []Running, g Gang) victimBest {
	best := victimBest{gangTier: 1 << 30}
	for mask := range 1 << len(eligible) {
		slots := map[string]int{}
		for _, n := range nodes {
			slots[n] = int(c.Free(n, gpu))
		}
		cand := victimBest{ok: true}
		for i, r := range eligible {
			if mask&(1<<i) != 0 {
				cand.victims++
				cand.hours += r.GPUHours
				for n, k := range r.Pods {
					slots[n] += k
				}
			}
		}
		var ok bool
		cand.gangTier, cand.groupTier, _, _, ok = exhaustive(tr, nodes, slots, g.Pods/max(g.PP, 1), g.PP, 1<<20, 1<<20)
		if !ok {
			continue
		}
		if !best.ok || cmp.Or(cmp.Compare(cand.gangTier, best.gangTier), cmp.Compare(cand.groupTier, best.groupTier),
			cmp.Compare(cand.victims, best.victims), cmp.Compare(cand.hours, best.hours)) < 0 {
			best = cand
		}
		if mask == 0 {
			break // it fits on free capacity: no preemption
		}
	}
	return best
}
