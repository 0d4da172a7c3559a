package placement

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSeedStrategies reproduces the six strategies of the Koordinator seed's table, in order, on its 3-tier
// fabric: each case leaves free exactly the nodes that make that strategy the best one.
func TestSeedStrategies(t *testing.T) {
	tr := seedTree(t)
	cases := []struct {
		name             string
		free             []string
		dp, pp           int
		gangTier, grpTer int
		domain           string
		nodes            []string
	}{
		{"1 all in one unit", []string{"n00", "n01", "n02", "n03", "n04", "n05", "n08"}, 2, 2, 1, 1, "unit0", []string{"n00", "n01", "n02", "n03"}},
		{"2 groups in units, gang in a leaf", []string{"n00", "n01", "n04", "n05", "n08"}, 2, 2, 2, 1, "leaf0", []string{"n00", "n01", "n04", "n05"}},
		{"3 all in one leaf", []string{"n00", "n04", "n05", "n06"}, 2, 2, 2, 2, "leaf0", []string{"n00", "n04", "n05", "n06"}},
		{"4 groups in units, gang across leaves", []string{"n00", "n01", "n04", "n08", "n09"}, 2, 2, 3, 1, "spine", []string{"n00", "n01", "n08", "n09"}},
		{"5 groups in leaves, gang across leaves", []string{"n00", "n04", "n08", "n12"}, 2, 2, 3, 2, "spine", []string{"n00", "n04", "n08", "n12"}},
		{"6 all under the spine", []string{"n00", "n04", "n05", "n08"}, 2, 2, 3, 3, "spine", []string{"n00", "n04", "n05", "n08"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mkCluster(t, tr, 1, busyExcept(tr, tc.free...))
			p, err := c.Place(Gang{Name: "g", Pods: tc.dp * tc.pp, DP: tc.dp, PP: tc.pp, Request: Resources{gpu: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if p.GangTier != tc.gangTier || p.GroupTier != tc.grpTer || p.GangDomain != tc.domain {
				t.Errorf("got gang tier %d in %s, group tier %d; want %d in %s, %d\n%s", p.GangTier, p.GangDomain, p.GroupTier, tc.gangTier, tc.domain, tc.grpTer, p.Explanation)
			}
			got := slices.Sorted(slices.Values(p.Ranks))
			if !slices.Equal(got, tc.nodes) {
				t.Errorf("nodes %v, want %v", got, tc.nodes)
			}
		})
	}
}

// TestPlaceShapes covers tier 0, PP groups kept in blocks, best fit and the hard and group limits.
func TestPlaceShapes(t *testing.T) {
	tr := seedTree(t)
	cases := []struct {
		name     string
		gpus     int64
		used     map[string]int64
		gang     Gang
		want     string // gang domain
		wantTier int
		wantErr  error
	}{
		{"fits on one node", 8, nil, Gang{Pods: 4, Request: Resources{gpu: 2}}, "n00", 0, nil},
		{"best fit prefers the fuller unit", 1, map[string]int64{"n08": 1, "n09": 1}, Gang{Pods: 2, Request: Resources{gpu: 1}}, "unit2", 1, nil},
		{"hard limit met", 1, map[string]int64{"n00": 1, "n04": 1, "n08": 1, "n12": 1}, Gang{Pods: 6, HardTierName: "leaf", Request: Resources{gpu: 1}}, "leaf0", 2, nil},
		{"hard limit not met", 1, nil, Gang{Pods: 9, HardTierName: "leaf", Request: Resources{gpu: 1}}, "", 0, ErrNoPlacement},
		{"group tier cap", 1, busyExcept(tr, "n00", "n04", "n05", "n06", "n08", "n09"), Gang{Pods: 4, DP: 2, PP: 2, GroupTier: 1, Request: Resources{gpu: 1}}, "spine", 3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mkCluster(t, tr, tc.gpus, tc.used)
			p, err := c.Place(tc.gang)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if p.GangDomain != tc.want || p.GangTier != tc.wantTier {
				t.Errorf("got %s (tier %d), want %s (tier %d): %s", p.GangDomain, p.GangTier, tc.want, tc.wantTier, p.Explanation)
			}
			if len(p.Ranks) != tc.gang.Pods {
				t.Errorf("%d ranks, want %d", len(p.Ranks), tc.gang.Pods)
			}
		})
	}
}

// TestBadInput checks that each kind of bad input is an *InputError naming its field.
func TestBadInput(t *testing.T) {
	tr := seedTree(t)
	c := mkCluster(t, tr, 8, nil)
	cases := []struct {
		name  string
		gang  Gang
		field string
	}{
		{"larger than the cluster", Gang{Pods: 200, Request: Resources{gpu: 1}}, "gang.pods"},
		{"no pods", Gang{Pods: 0, Request: Resources{gpu: 1}}, "gang.pods"},
		{"DP x PP is not M", Gang{Pods: 8, DP: 3, PP: 2, Request: Resources{gpu: 1}}, "gang.dp"},
		{"unknown resource", Gang{Pods: 1, Request: Resources{"amd.com/gpu": 1}}, "gang.request[amd.com/gpu]"},
		{"empty request", Gang{Pods: 1}, "gang.request"},
		{"unknown hard tier name", Gang{Pods: 1, HardTierName: "rack", Request: Resources{gpu: 1}}, "gang.hardTierName"},
		{"unknown hard tier", Gang{Pods: 1, HardTier: 7, Request: Resources{gpu: 1}}, "gang.hardTier"},
		{"unknown group tier", Gang{Pods: 1, GroupTierName: "pod", Request: Resources{gpu: 1}}, "gang.groupTierName"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Place(tc.gang)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != tc.field || p != nil {
				t.Fatalf("got %v, %v; want an InputError on %s and no plan", p, err, tc.field)
			}
		})
	}
}

// TestNodeInTwoDomains refuses a tree that puts a node in two domains.
func TestNodeInTwoDomains(t *testing.T) {
	tr := mkTree(t, "top/2: a b", "a/1: n1 n2", "b/1: n2 n3")
	_, err := NewFabric(tr)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "tree.nodes[n2]" || !strings.Contains(err.Error(), "two domains") {
		t.Fatalf("got %v", err)
	}
}

// TestFabricAccessors covers the read-only views of a Fabric, and the cluster root added above a forest.
func TestFabricAccessors(t *testing.T) {
	f, err := NewFabric(mkTree(t, "a/2/spine: la", "la/1/leaf: n1 n2", "b/1/leaf: n3"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Root() != ClusterDomain || !slices.Equal(f.Tiers(), []int{0, 1, 2, 3}) {
		t.Errorf("root %s, tiers %v; want cluster and 0-3", f.Root(), f.Tiers())
	}
	if got := f.NodeDomains("n2"); !slices.Equal(got, []string{"la", "a", ClusterDomain}) {
		t.Errorf("NodeDomains(n2) = %v", got)
	}
	if tier, ok := f.TierByName("leaf"); !ok || tier != 1 || f.TierName(0) != "node" {
		t.Errorf("TierByName(leaf) = %d, %v; TierName(0) = %s", tier, ok, f.TierName(0))
	}
	if tier, name, err := f.Span([]string{"n1", "n3"}); err != nil || tier != 3 || name != ClusterDomain {
		t.Errorf("Span(n1, n3) = %d %s %v", tier, name, err)
	}
	if _, _, err := f.Span([]string{"nope"}); err == nil {
		t.Error("Span of an unknown node should fail")
	}
	if d := f.Domains(); len(d) != 4 || d[len(d)-1].Name != ClusterDomain {
		t.Errorf("Domains() = %+v", d)
	}
}

// TestBinpackWeights shows the per-resource weights of the best-fit score deciding between two leaves that
// tie on everything else.
func TestBinpackWeights(t *testing.T) {
	tr := mkTree(t, "top/2: a b", "a/1: a1 a2 a3", "b/1: b1 b2 b3")
	f, err := NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	alloc := Resources{gpu: 8, "cpu": 64}
	nodes := []Node{
		{Name: "a1", Allocatable: alloc}, {Name: "a2", Allocatable: alloc}, {Name: "a3", Allocatable: alloc, Used: Resources{gpu: 8}},
		{Name: "b1", Allocatable: alloc}, {Name: "b2", Allocatable: alloc}, {Name: "b3", Allocatable: alloc, Used: Resources{"cpu": 60}},
	}
	c, _, err := NewCluster(f, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		weights map[string]float64
		want    string
	}{
		{nil, "a"},                           // GPUs left: none in a, a node's worth in b
		{map[string]float64{"cpu": 10}, "b"}, // CPU counts more: b has less CPU left
		{map[string]float64{gpu: 10}, "a"},
	} {
		p, err := c.Place(Gang{Name: "g", Pods: 2, Request: Resources{gpu: 8, "cpu": 8}, Weights: tc.weights})
		if err != nil {
			t.Fatal(err)
		}
		if p.GangDomain != tc.want {
			t.Errorf("weights %v: got %s, want %s (%s)", tc.weights, p.GangDomain, tc.want, p.Explanation)
		}
	}
}

// TestRandomMultiResource checks on random fabrics with several resources and uneven nodes that every plan
// respects every node's free resources and places exactly the gang's pods, and that a placement is found
// whenever the gang's pods fit in the whole fabric's free slots.
func TestRandomMultiResource(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	placed := 0
	for it := range 500 {
		tr, _ := randomFabric(rng, 2+rng.IntN(10))
		f, err := NewFabric(tr)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []Node
		for _, n := range f.Nodes() {
			a := Resources{gpu: int64(rng.IntN(9)), "cpu": int64(rng.IntN(65)), "memory": int64(1+rng.IntN(8)) << 30}
			u := Resources{gpu: int64(rng.IntN(int(a[gpu])/2 + 1)), "cpu": int64(rng.IntN(int(a["cpu"])/2 + 1))}
			nodes = append(nodes, Node{Name: n, Allocatable: a, Used: u})
		}
		c, _, err := NewCluster(f, nodes, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := Gang{Name: "g", Pods: 1 + rng.IntN(8), PP: 1 + rng.IntN(3), Request: Resources{gpu: 1 + int64(rng.IntN(2)), "cpu": 1 + int64(rng.IntN(8)), "memory": 1 << 30}}
		free := 0
		for _, s := range c.Slots(g.Request) {
			free += s
		}
		p, err := c.Place(g)
		var ie *InputError
		switch {
		case errors.As(err, &ie):
			continue // larger than the cluster, or a resource no node has
		case errors.Is(err, ErrNoPlacement):
			if free >= g.Pods {
				t.Fatalf("iteration %d: %d free slots for %d pods, but no placement", it, free, g.Pods)
			}
			continue
		case err != nil:
			t.Fatal(err)
		}
		placed++
		if len(p.Ranks) != g.Pods {
			t.Fatalf("iteration %d: %d ranks for %d pods", it, len(p.Ranks), g.Pods)
		}
		count := map[string]int64{}
		for _, n := range p.Ranks {
			count[n]++
		}
		for n, k := range count {
			for r, q := range g.Request {
				if k*q > c.Free(n, r) {
					t.Fatalf("iteration %d: node %s gets %d pods needing %d %s, has %d free", it, n, k, k*q, r, c.Free(n, r))
				}
			}
		}
	}
	if placed < 100 {
		t.Fatalf("only %d of 500 random gangs were placed: the generator is too tight", placed)
	}
}

// TestRoles places a gang given by roles with the largest role request, ranks in role order, and names the
// field of bad roles.
func TestRoles(t *testing.T) {
	tr := seedTree(t)
	c := mkCluster(t, tr, 8, busyExcept(tr))
	for _, n := range []string{"n00", "n01", "n02"} {
		c.used[c.res[gpu]][c.fabric.nodeIdx[n]] = 0
	}
	g := Gang{Name: "g", Roles: []Role{{Name: "launcher", Pods: 1, Request: Resources{gpu: 1}}, {Name: "worker", Pods: 2, Request: Resources{gpu: 8}}}}
	p, err := c.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	if p.GangDomain != "unit0" || !slices.Equal(p.Roles, []string{"launcher", "worker", "worker"}) || len(p.Ranks) != 3 {
		t.Errorf("got %s, roles %v, ranks %v; want unit0, launcher then two workers", p.GangDomain, p.Roles, p.Ranks)
	}
	for _, tc := range []struct {
		gang  Gang
		field string
	}{
		{Gang{Roles: []Role{{Name: "w", Pods: 0, Request: Resources{gpu: 1}}}}, "gang.roles[0].pods"},
		{Gang{Roles: []Role{{Name: "w", Pods: 1}}}, "gang.roles[0].request"},
		{Gang{Pods: 3, Roles: []Role{{Name: "w", Pods: 1, Request: Resources{gpu: 1}}}}, "gang.pods"},
		{Gang{Request: Resources{gpu: 1}, Roles: []Role{{Name: "w", Pods: 1, Request: Resources{gpu: 1}}}}, "gang.request"},
	} {
		_, err := c.Place(tc.gang)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%+v: got %v, want an error on %s", tc.gang, err, tc.field)
		}
	}
}
