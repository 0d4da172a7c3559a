package aggregator

import (
	"strings"
	"testing"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
)

func TestConsistent(t *testing.T) {
	cases := []struct {
		name string
		hns  []topologyv1alpha1.HyperNode
		err  string
	}{
		{name: "a tree", hns: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:b"), hn("a", 1, "node:n1"), hn("b", 1, "node:n2")}},
		{name: "an emptied HyperNode waiting below its parent", hns: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:b"), hn("a", 1, "node:n1"), hn("b", 1)}},
		{name: "a leaf under a spine and the root", hns: []topologyv1alpha1.HyperNode{
			hn("root", 3, "hn:spine", "hn:a"), hn("spine", 2, "hn:a"), hn("a", 1, "node:n1")},
			err: `HyperNode "a" is a member of both`},
		{name: "a node in two leaves", hns: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:b"), hn("a", 1, "node:n1"), hn("b", 1, "node:n1")},
			err: `node "n1" is a member of both "a" and "b"`},
		{name: "a root whose tier is not above its leaf's", hns: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a"), hn("a", 2, "node:n1")},
			err: `HyperNode "a" (tier 2) is a member of "root", whose tier 2 is not higher`},
		{name: "a member HyperNode that is gone", hns: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:gone"), hn("a", 1, "node:n1")},
			err: `HyperNode "gone" does not exist`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := consistent(c.hns, nil)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("consistent: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("consistent: %v, want an error containing %q", err, c.err)
			}
		})
	}
}

// TestAfterPass applies a plan to the existing HyperNodes: kept and desired ones replace theirs, due ones go.
func TestAfterPass(t *testing.T) {
	existing := []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:old"), hn("a", 1, "node:n1"), hn("old", 1, "node:n2"), hn("gone", 1, "node:n3")}
	plan := pendingPlan{
		desired: []topologyv1alpha1.HyperNode{hn("root", 2, "hn:a", "hn:b", "hn:old"), hn("a", 1, "node:n1"), hn("b", 1, "node:n2")},
		kept:    []topologyv1alpha1.HyperNode{hn("old", 1)},
	}
	got := afterPass(existing, plan, []string{"gone"})
	var names []string
	for _, h := range got {
		names = append(names, h.Name+":"+strings.Repeat("m", len(h.Spec.Members)))
	}
	if want := "a:m b:m old: root:mmm"; strings.Join(names, " ") != want {
		t.Errorf("after the pass: %q, want %q", strings.Join(names, " "), want)
	}
	if err := consistent(got, nil); err != nil {
		t.Errorf("the pass's result: %v", err)
	}
}
