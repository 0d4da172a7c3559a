package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

func tree() *topology.Tree {
	t, _ := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "n1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
		{Node: "n2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "leaf-a"}}},
		{Node: "n3", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "2", SwitchName: "leaf-b"}}},
		{Node: "n4"},
	}}, topology.BuildOptions{})
	return t
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, tree(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `fabric  (tier 2, fabric, 3 nodes, source inferred)
├── leaf-a  (tier 1, leaf, 2 nodes, source reports)
│   ├── n1
│   └── n2
└── leaf-b  (tier 1, leaf, 1 nodes, source reports)
    └── n3
nodes without topology (1): n4
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := Text(&b, tree(), TextOptions{HideNodes: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "── n1") {
		t.Fatalf("HideNodes still lists nodes:\n%s", b.String())
	}
}

// Text from HyperNodes someone else wrote: a tier name and a source with a terminal escape and a newline are
// printed escaped, on their line.
func TestTextEscapesControlCharacters(t *testing.T) {
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "root", Tier: 2, TierName: "\x1b[31mred", Children: []string{"leaf"}},
		{Name: "leaf", Tier: 1, Parent: "root", Source: "x\ny", Nodes: []string{"n\x1b[0m1"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	tr.Unplaced = []string{"lost\r"}
	var b bytes.Buffer
	if err := Text(&b, tr, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `root  (tier 2, \x1b[31mred, 1 nodes)
└── leaf  (tier 1, 1 nodes, source x\ny)
    └── n\x1b[0m1
nodes without topology (1): lost\r
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

func TestDOT(t *testing.T) {
	var b bytes.Buffer
	if err := DOT(&b, tree()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`digraph fabricmap {`,
		`"fabric" [shape=box, label="fabric\ntier 2 fabric\n3 nodes"];`,
		`"fabric" -> "leaf-a";`,
		`"leaf-b" -> "node/n3";`,
		`"node/n4" [shape=ellipse, style=dashed, label="n4\nno topology"];`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DOT output lacks %q:\n%s", want, b.String())
		}
	}
}
