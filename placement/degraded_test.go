package placement

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// degradedOutcome is what the degraded-uplinks tests compare: where the gang went and what the plan says of
// degraded uplinks.
type degradedOutcome struct {
	GangDomain string
	// Bottom are the bottom domains holding the gang's pods, sorted.
	Bottom          []string
	DegradedUplinks int
	Avoided         []string
}

// outcomeOf summarises a plan.
func outcomeOf(f *Fabric, p *Plan) degradedOutcome {
	o := degradedOutcome{GangDomain: p.GangDomain, DegradedUplinks: p.DegradedUplinks, Avoided: p.Avoided}
	for _, n := range p.Ranks {
		o.Bottom = append(o.Bottom, f.NodeDomains(n)[0])
	}
	o.Bottom = slices.Compact(slices.Sorted(slices.Values(o.Bottom)))
	return o
}

// TestDegradedUplinks: a domain with degraded uplinks ranks after a healthier one of the same tier (key 4 of
// the ladder), inside the gang's domain too, but never at the cost of the gang tier, the group tier or more
// domains used (keys 1 to 3); the plan names what it passed over. Unavailable nodes take no pod.
func TestDegradedUplinks(t *testing.T) {
	twoLeaves := []string{"spine/2/spine: leaf-a leaf-b", "leaf-a/1/leaf: a1 a2", "leaf-b/1/leaf: b1 b2"}
	threeLeaves := []string{"spine/2/spine: l1 l2 l3", "l1/1/leaf: n11 n12", "l2/1/leaf: n21 n22", "l3/1/leaf: n31 n32 n33"}
	cases := []struct {
		name        string
		tree        []string
		degraded    map[string]int
		busy        []string // nodes with their one GPU in use
		unavailable []string
		gang        Gang
		want        degradedOutcome
		explains    string // in the explanation
	}{{
		name: "the healthy leaf over a degraded one at the same tier", tree: twoLeaves, degraded: map[string]int{"leaf-a": 1},
		gang:     Gang{Pods: 2},
		want:     degradedOutcome{GangDomain: "leaf-b", Bottom: []string{"leaf-b"}, Avoided: []string{"leaf-a"}},
		explains: "leaf leaf-a (1 degraded uplink) lost to a healthier leaf at the same tier",
	}, {
		name: "healthy and degraded alike: no change", tree: twoLeaves,
		gang: Gang{Pods: 2},
		want: degradedOutcome{GangDomain: "leaf-a", Bottom: []string{"leaf-a"}},
	}, {
		name: "the healthy leaf although the degraded one fits tighter",
		tree: []string{"spine/2/spine: leaf-a leaf-b", "leaf-a/1/leaf: a1 a2", "leaf-b/1/leaf: b1 b2 b3"}, degraded: map[string]int{"leaf-a": 2},
		gang:     Gang{Pods: 2},
		want:     degradedOutcome{GangDomain: "leaf-b", Bottom: []string{"leaf-b"}, Avoided: []string{"leaf-a"}},
		explains: "leaf leaf-a (2 degraded uplinks) lost to a healthier leaf",
	}, {
		name: "fewer degraded uplinks first", tree: twoLeaves, degraded: map[string]int{"leaf-a": 2, "leaf-b": 1},
		gang:     Gang{Pods: 2},
		want:     degradedOutcome{GangDomain: "leaf-b", Bottom: []string{"leaf-b"}, DegradedUplinks: 1, Avoided: []string{"leaf-a"}},
		explains: "1 degraded uplink in the domains used; leaf leaf-a (2 degraded uplinks) lost",
	}, {
		name: "the gang tier comes first", tree: twoLeaves, degraded: map[string]int{"leaf-a": 1}, busy: []string{"b1"},
		gang:     Gang{Pods: 2},
		want:     degradedOutcome{GangDomain: "leaf-a", Bottom: []string{"leaf-a"}, DegradedUplinks: 1},
		explains: "1 degraded uplink in the domains used",
	}, {
		name: "the group tier comes first",
		tree: []string{"spine/3/spine: leaf0 leaf1", "leaf0/2/leaf: u0 u1", "leaf1/2/leaf: u2 u3 u4",
			"u0/1/unit: n00 n01 n02", "u1/1/unit: n10 n11 n12",
			"u2/1/unit: n20 n21 n22", "u3/1/unit: n30 n31 n32", "u4/1/unit: n40 n41 n42"},
		degraded: map[string]int{"leaf0": 1}, busy: []string{"n22", "n32", "n42"},
		gang: Gang{Pods: 6, DP: 2, PP: 3},
		want: degradedOutcome{GangDomain: "leaf0", Bottom: []string{"u0", "u1"}, DegradedUplinks: 1},
	}, {
		name: "fewer domains come first",
		tree: []string{"root/3/fabric: s1 s2", "s1/2/spine: l1 l2 l3", "s2/2/spine: l4 l5",
			"l1/1/leaf: n11 n12", "l2/1/leaf: n21 n22", "l3/1/leaf: n31 n32", "l4/1/leaf: n41 n42", "l5/1/leaf: n51 n52"},
		degraded: map[string]int{"l4": 1}, busy: []string{"n22", "n32"},
		gang: Gang{Pods: 4},
		want: degradedOutcome{GangDomain: "s2", Bottom: []string{"l4", "l5"}, DegradedUplinks: 1},
	}, {
		name: "inside the gang's domain, the healthy leaves (exact fill)", tree: threeLeaves, degraded: map[string]int{"l1": 1},
		gang:     Gang{Pods: 4},
		want:     degradedOutcome{GangDomain: "spine", Bottom: []string{"l2", "l3"}, Avoided: []string{"l1"}},
		explains: "leaf l1 (1 degraded uplink) lost to a healthier leaf at the same tier",
	}, {
		name: "inside the gang's domain, the healthy leaves (greedy fill of PP groups)", tree: threeLeaves, degraded: map[string]int{"l1": 1},
		busy: []string{"n33"},
		gang: Gang{Pods: 4, DP: 2, PP: 2},
		want: degradedOutcome{GangDomain: "spine", Bottom: []string{"l2", "l3"}, Avoided: []string{"l1"}},
	}, {
		name: "a degraded spine counts for a gang in it", tree: append(slices.Clone(twoLeaves), "top/3/fabric: spine"),
		degraded: map[string]int{"spine": 1}, busy: []string{"a2", "b2"},
		gang: Gang{Pods: 2},
		want: degradedOutcome{GangDomain: "spine", Bottom: []string{"leaf-a", "leaf-b"}, DegradedUplinks: 1},
	}, {
		name: "unavailable nodes take no pod", tree: twoLeaves, unavailable: []string{"a2"},
		gang: Gang{Pods: 2},
		want: degradedOutcome{GangDomain: "leaf-b", Bottom: []string{"leaf-b"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := mkTree(t, tc.tree...)
			for d, n := range tc.degraded {
				tr.Domains[d].DegradedUplinks = n
			}
			f, err := NewFabric(tr)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []Node
			for _, n := range f.Nodes() {
				node := Node{Name: n, Allocatable: Resources{gpu: 1}, Unavailable: slices.Contains(tc.unavailable, n)}
				if slices.Contains(tc.busy, n) {
					node.Used = Resources{gpu: 1}
				}
				nodes = append(nodes, node)
			}
			c, _, err := NewCluster(f, nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := tc.gang
			g.Name, g.Request = "g", Resources{gpu: 1}
			p, err := c.Place(g)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(f, p)); diff != "" {
				t.Errorf("placement (-want +got):\n%s\n%s", diff, p.Explanation)
			}
			if !strings.Contains(p.Explanation, tc.explains) {
				t.Errorf("explanation %q, want it to say %q", p.Explanation, tc.explains)
			}
			if len(p.Avoided) == 0 && strings.Contains(p.Explanation, "lost to") {
				t.Errorf("explanation %q names a domain passed over, the plan none", p.Explanation)
			}
		})
	}
}

// TestPreemptAvoidsDegraded: between two equally good sets of victims, Preempt evicts in the healthier leaf.
func TestPreemptAvoidsDegraded(t *testing.T) {
	for _, tc := range []struct {
		degraded string
		victims  []string
	}{{"", []string{"ra"}}, {"leaf-a", []string{"rb"}}, {"leaf-b", []string{"ra"}}} {
		t.Run("degraded "+tc.degraded, func(t *testing.T) {
			tr := mkTree(t, "spine/2/spine: leaf-a leaf-b", "leaf-a/1/leaf: a1 a2", "leaf-b/1/leaf: b1 b2")
			if tc.degraded != "" {
				tr.Domains[tc.degraded].DegradedUplinks = 1
			}
			c := mkCluster(t, tr, 1, nil)
			for _, r := range []Running{
				{Name: "ra", Preemptible: true, Pods: map[string]int{"a1": 1, "a2": 1}, Request: Resources{gpu: 1}, GPUHours: 5},
				{Name: "rb", Preemptible: true, Pods: map[string]int{"b1": 1, "b2": 1}, Request: Resources{gpu: 1}, GPUHours: 5},
			} {
				if err := c.AddRunning(r, true); err != nil {
					t.Fatal(err)
				}
			}
			p, err := c.Preempt(Gang{Name: "g", Pods: 2, Priority: 1, Request: Resources{gpu: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.victims, p.Victims); diff != "" {
				t.Errorf("victims (-want +got):\n%s\n%s", diff, p.Explanation)
			}
		})
	}
}

// TestDegradedUplinksInput: a negative count is an InputError naming the domain; the count shows in Domains.
func TestDegradedUplinksInput(t *testing.T) {
	tr := mkTree(t, "spine/2/spine: leaf-a leaf-b", "leaf-a/1/leaf: a1", "leaf-b/1/leaf: b1")
	tr.Domains["leaf-b"].DegradedUplinks = 3
	f, err := NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, d := range f.Domains() {
		got[d.Name] = d.DegradedUplinks
	}
	if diff := cmp.Diff(map[string]int{"spine": 0, "leaf-a": 0, "leaf-b": 3}, got); diff != "" {
		t.Errorf("Domains' degraded uplinks (-want +got):\n%s", diff)
	}
	tr.Domains["leaf-a"].DegradedUplinks = -1
	_, err = NewFabric(tr)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "tree.domains[leaf-a].degradedUplinks" {
		t.Errorf("NewFabric: %v, want an InputError on tree.domains[leaf-a].degradedUplinks", err)
	}
}
