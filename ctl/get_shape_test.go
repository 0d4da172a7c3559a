package ctl

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// threeTiers is a tree three domains deep, its last branches on every level, and a node without topology.
func threeTiers(t *testing.T) *topology.Tree {
	t.Helper()
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "fabric", Tier: 3, Children: []string{"spine-a", "spine-b"}},
		{Name: "spine-a", Tier: 2, Parent: "fabric", Children: []string{"leaf-a1", "leaf-a2"}},
		{Name: "spine-b", Tier: 2, Parent: "fabric", Children: []string{"leaf-b1"}},
		{Name: "leaf-a1", Tier: 1, Parent: "spine-a", Nodes: []string{"n1", "n2"}},
		{Name: "leaf-a2", Tier: 1, Parent: "spine-a", Nodes: []string{"n3"}},
		{Name: "leaf-b1", Tier: 1, Parent: "spine-b", Nodes: []string{"n4"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	tr.Unplaced = []string{"n5"}
	return tr
}

func TestTreeShape(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape treeShape
		want  string
	}{
		{"every level", treeShape{}, `fabric  (tier 3, 4 nodes)
├── spine-a  (tier 2, 3 nodes)
│   ├── leaf-a1  (tier 1, 2 nodes)
│   │   ├── n1
│   │   └── n2
│   └── leaf-a2  (tier 1, 1 nodes)
│       └── n3
└── spine-b  (tier 2, 1 nodes)
    └── leaf-b1  (tier 1, 1 nodes)
        └── n4
nodes without topology (1): n5
`},
		{"depth 1", treeShape{depth: 1}, "fabric  (tier 3, 4 nodes)\nnodes without topology (1): n5\n"},
		{"depth 2", treeShape{depth: 2}, `fabric  (tier 3, 4 nodes)
├── spine-a  (tier 2, 3 nodes)
└── spine-b  (tier 2, 1 nodes)
nodes without topology (1): n5
`},
		{"depth 3", treeShape{depth: 3}, `fabric  (tier 3, 4 nodes)
├── spine-a  (tier 2, 3 nodes)
│   ├── leaf-a1  (tier 1, 2 nodes)
│   └── leaf-a2  (tier 1, 1 nodes)
└── spine-b  (tier 2, 1 nodes)
    └── leaf-b1  (tier 1, 1 nodes)
nodes without topology (1): n5
`},
		{"depth 4 is every level", treeShape{depth: 4}, ""},
		{"domains only", treeShape{domainsOnly: true}, `fabric  (tier 3, 4 nodes)
├── spine-a  (tier 2, 3 nodes)
│   ├── leaf-a1  (tier 1, 2 nodes)
│   └── leaf-a2  (tier 1, 1 nodes)
└── spine-b  (tier 2, 1 nodes)
    └── leaf-b1  (tier 1, 1 nodes)
nodes without topology (1): n5
`},
		{"domains only, depth 9", treeShape{domainsOnly: true, depth: 9}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" { // the same as the whole tree, shaped only by domainsOnly
				var whole bytes.Buffer
				if err := (treeShape{domainsOnly: tc.shape.domainsOnly}).text(&whole, threeTiers(t)); err != nil {
					t.Fatal(err)
				}
				tc.want = whole.String()
			}
			var out bytes.Buffer
			if err := tc.shape.text(&out, threeTiers(t)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
