package placement

import "testing"

// TestBottomUpBestFit shows candidates that tie on the ladder up to their own fit going to the fuller
// enclosing domain, though it comes later in name order.
func TestBottomUpBestFit(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		gpus  int64
		used  map[string]int64
		gang  Gang
		want  string // gang domain
	}{
		{"a node in the fuller leaf", []string{"top/2: l1 l2", "l1/1: a1 a2 a3", "l2/1: b1 b2 b3"}, 8,
			map[string]int64{"b2": 8, "b3": 8}, Gang{Pods: 1, Request: Resources{gpu: 8}}, "b1"},
		{"a leaf in the fuller spine", []string{"top/3: s1 s2", "s1/2: l1 l2", "s2/2: l3 l4", "l1/1: a1 a2", "l2/1: b1 b2",
			"l3/1: c1 c2", "l4/1: d1 d2"}, 1, map[string]int64{"d1": 1, "d2": 1}, Gang{Pods: 2, Request: Resources{gpu: 1}}, "l3"},
		// l1 has 4 slots of 4 GPUs (two empty nodes) but 40 % free; l2 has 2 slots, but 50 % free.
		{"fuller by slots of the request, then by share", []string{"top/2: l1 l2", "l1/1: a1 a2 a3 a4 a5", "l2/1: b1 b2 b3 b4 b5"}, 8,
			map[string]int64{"a3": 8, "a4": 8, "a5": 8, "b2": 5, "b3": 5, "b4": 5, "b5": 5}, Gang{Pods: 1, Request: Resources{gpu: 4}}, "b1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mkCluster(t, mkTree(t, tc.lines...), tc.gpus, tc.used)
			tc.gang.Name = "g"
			p, err := c.Place(tc.gang)
			if err != nil {
				t.Fatal(err)
			}
			if p.GangDomain != tc.want {
				t.Errorf("got %s, want %s: %s", p.GangDomain, tc.want, p.Explanation)
			}
		})
	}
}
