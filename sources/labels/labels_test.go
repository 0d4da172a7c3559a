package labels

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

const (
	zone  = "topology.kubernetes.io/zone"
	spine = "example.com/spine"
	leaf  = "example.com/leaf"
)

// node makes a Node from its name and key, value pairs.
func node(name string, kv ...string) Node {
	n := Node{Name: name, Labels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// zsl is a node with a zone, a spine and a leaf label.
func zsl(name, z, s, l string) Node { return node(name, zone, z, spine, s, leaf, l) }

// build runs topology.Build and fails on anything but a valid tree without problems.
func build(t *testing.T, in topology.Input) *topology.Tree {
	t.Helper()
	tree, probs := topology.Build(in, topology.BuildOptions{RootName: "fabric"})
	if len(probs) > 0 {
		t.Errorf("build problems: %v", probs)
	}
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	return tree
}

func reasons(probs []topology.Problem) []string {
	var out []string
	for _, p := range probs {
		out = append(out, p.Node+": "+p.Reason)
	}
	return out
}

func TestEvidenceGivesTheLabelledTree(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		nodes    []Node
		want     []string
		problems []string
	}{{
		name: "three keys give three tiers named by the values",
		keys: []string{zone, spine, leaf},
		nodes: []Node{
			zsl("a1", "z1", "s1", "l1"), zsl("a2", "z1", "s1", "l1"), zsl("a3", "z1", "s1", "l2"),
			zsl("b1", "z1", "s2", "l3"),
			zsl("c1", "z2", "s3", "l4"), zsl("c2", "z2", "s4", "l5"),
		},
		want: []string{
			"fabric(4)z1,z2",
			"l1(1)a1,a2", "l2(1)a3", "l3(1)b1", "l4(1)c1", "l5(1)c2",
			"s1(2)l1,l2", "s2(2)l3", "s3(2)l4", "s4(2)l5",
			"z1(3)s1,s2", "z2(3)s3,s4",
		},
	}, {
		name:  "one key gives leaves under the root",
		keys:  []string{leaf},
		nodes: []Node{node("a1", leaf, "Leaf_A"), node("a2", leaf, "Leaf_A"), node("b1", leaf, "leaf-b")},
		want:  []string{"fabric(2)leaf-a,leaf-b", "leaf-a(1)a1,a2", "leaf-b(1)b1"},
	}, {
		name: "nodes without a full path are left out, never guessed",
		keys: []string{zone, spine, leaf},
		nodes: []Node{
			zsl("a1", "z1", "s1", "l1"), zsl("a2", "z1", "s1", "l2"), zsl("b1", "z1", "s2", "l3"), zsl("b2", "z1", "s2", "l3"),
			node("no-spine", zone, "z1", leaf, "l1"),
			node("no-zone", spine, "s1", leaf, "l1"),
			node("no-leaf", zone, "z1", spine, "s1"),
			node("control-plane"),
			zsl("empty", "z1", "", "l1"),
			zsl("bad-value", "z1", "s1", "not a value"),
			zsl("twice", "z1", "s1", "l1"), zsl("twice", "z1", "s2", "l3"),
		},
		want: []string{"fabric(3)s1,s2", "l1(1)a1", "l2(1)a2", "l3(1)b1,b2", "s1(2)l1,l2", "s2(2)l3"},
		problems: []string{
			"bad-value: label example.com/leaf has an invalid value \"not a value\": a valid label must be an empty " +
				"string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
				"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
				"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
			"control-plane: no label example.com/leaf",
			"empty: label example.com/spine is empty",
			"no-leaf: no label example.com/leaf",
			"no-spine: no label example.com/spine, though it has example.com/leaf=l1: a partial path would put the node in a wrong tier",
			"no-zone: no label topology.kubernetes.io/zone, though it has example.com/leaf=l1: a partial path would put the node in a wrong tier",
			"twice: listed 2 times; which entry is right cannot be told",
		},
	}, {
		name: "one leaf value under two spines is two leaves, named after their spines",
		keys: []string{spine, leaf},
		nodes: []Node{
			node("a1", spine, "s1", leaf, "l1"), node("a2", spine, "s1", leaf, "l2"),
			node("b1", spine, "s2", leaf, "l1"), node("b2", spine, "s2", leaf, "l3"),
		},
		want: []string{
			"fabric(3)s1,s2", "l2(1)a2", "l3(1)b2", "s1(2)l2,s1-l1", "s1-l1(1)a1",
			"s2(2)l3,s2-l1", "s2-l1(1)b1",
		},
	}, {
		name: "racks and rows numbered per zone: prefixes chain down",
		keys: []string{zone, spine, leaf},
		nodes: []Node{
			zsl("a1", "a", "1", "1"), zsl("a2", "a", "1", "2"), zsl("a3", "a", "2", "1"),
			zsl("b1", "b", "1", "1"), zsl("b2", "b", "3", "2"),
		},
		// Spine 1 is in both zones, leaf 1 under three spines, leaf 2 under two; spines 2 and 3 are unique.
		want: []string{
			"2(2)2-1", "2-1(1)a3", "3(2)3-2", "3-2(1)b2",
			"a(3)2,a-1", "a-1(2)a-1-1,a-1-2", "a-1-1(1)a1", "a-1-2(1)a2",
			"b(3)3,b-1", "b-1(2)b-1-1", "b-1-1(1)b1",
			"fabric(4)a,b",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, probs := Evidence(tc.nodes, tc.keys)
			if diff := cmp.Diff(tc.problems, reasons(probs)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, build(t, in).Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvidenceDoesNotDependOnOrder(t *testing.T) {
	keys := []string{zone, spine, leaf}
	nodes := []Node{
		zsl("a1", "z1", "s1", "l1"), zsl("a2", "z1", "s1", "l1"), zsl("a3", "z1", "s2", "l1"),
		zsl("b1", "z2", "s3", "l4"), zsl("b2", "z2", "s3", "l5"),
		node("no-spine", zone, "z1", leaf, "l1"), zsl("twice", "z1", "s1", "l1"), zsl("twice", "z2", "s3", "l4"),
	}
	want, wantProbs := Evidence(nodes, keys)
	if len(want.Nodes) != 5 || len(want.SwitchLinks) != 7 || len(wantProbs) != 2 {
		t.Fatalf("got %d nodes, %d switch links, %d problems; want 5, 7, 2", len(want.Nodes), len(want.SwitchLinks), len(wantProbs))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := make([]Node, len(nodes))
		for i, j := range rng.Perm(len(nodes)) {
			shuffled[i] = nodes[j]
		}
		got, probs := Evidence(shuffled, keys)
		if diff := cmp.Diff(want, got) + cmp.Diff(wantProbs, probs); diff != "" {
			t.Fatalf("order %v changed the evidence (evidence, then problems; -want +got):\n%s", shuffled, diff)
		}
	}
}

func TestValidateKeys(t *testing.T) {
	tests := []struct {
		keys []string
		err  string // a part of the error; "" for none
	}{
		{keys: []string{zone, spine, leaf}},
		{keys: []string{"rack"}},
		{keys: nil, err: "no label key given"},
		{keys: []string{zone, "Bad Key"}, err: `label key 2 ("Bad Key") is not a valid label key`},
		{keys: []string{"example.com/"}, err: `label key 1 ("example.com/")`},
		{keys: []string{"Not_A.Domain/x"}, err: "prefix part"},
		{keys: []string{spine, leaf, spine}, err: `label key "example.com/spine" is given twice (keys 1 and 3)`},
	}
	for _, tc := range tests {
		err := ValidateKeys(tc.keys)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidateKeys(%q) = %v, want an error with %q", tc.keys, err, tc.err)
		}
	}
	in, probs := Evidence([]Node{zsl("a1", "z1", "s1", "l1")}, []string{leaf, leaf})
	if len(in.Nodes) != 0 || len(in.SwitchLinks) != 0 || len(probs) != 1 || !strings.Contains(probs[0].Reason, "given twice") {
		t.Errorf("Evidence with repeated keys = %+v, %v; want no evidence and one problem", in, probs)
	}
}

// TestMergeBelowSwitchEvidence merges labels below reports: a1–a3 have reports (a3's says leaf sw-leaf-b, its
// labels sw-leaf-a; a4's report names no switch), the other nodes labels only. Spine s1's leaf sw-leaf-a has
// no node left to the labels; it must not stand in the tree.
func TestMergeBelowSwitchEvidence(t *testing.T) {
	report := func(name, id, sw string) topology.NodeEvidence {
		return topology.NodeEvidence{Node: name, Source: "reports", Links: []topology.SwitchLink{{SwitchID: id, SwitchName: sw}}}
	}
	reports := topology.Input{Nodes: []topology.NodeEvidence{
		report("a1", "mac:aa", "sw-leaf-a"), report("a2", "mac:aa", "sw-leaf-a"),
		report("a3", "mac:bb", "sw-leaf-b"), report("a4", "mac:cc", ""),
	}}
	labelled, probs := Evidence([]Node{
		zsl("a1", "z1", "s1", "sw-leaf-a"), zsl("a2", "z1", "s1", "SW_LEAF_A"), zsl("a3", "z1", "s1", "sw-leaf-a"),
		zsl("a4", "z1", "s1", "sw-leaf-a"),
		zsl("d1", "z1", "s1", "l-e"), zsl("c1", "z1", "s2", "l-c"),
		zsl("c2", "z2", "s3", "l-d"), zsl("c3", "z2", "s4", "l-f"),
	}, []string{zone, spine, leaf})
	if len(probs) > 0 {
		t.Fatal(probs)
	}

	plain, _ := topology.Merge(reports, labelled)
	for _, n := range plain.Nodes {
		if want := map[bool]string{true: "reports", false: Name}[n.Node[0] == 'a']; n.Source != want {
			t.Errorf("topology.Merge: node %s from %s, want %s", n.Node, n.Source, want)
		}
	}

	merged, conflicts := MergeBelow(reports, labelled)
	if diff := cmp.Diff(plain.Nodes, merged.Nodes); diff != "" {
		t.Errorf("MergeBelow nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]topology.Conflict{{Node: "a3", Kept: "reports", Dropped: Name}}, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	want := []string{
		"fabric(4)mac-cc,sw-leaf-a,sw-leaf-b,z1,z2",
		"l-c(1)c1", "l-d(1)c2", "l-e(1)d1", "l-f(1)c3", "mac-cc(1)a4",
		"s1(2)l-e", "s2(2)l-c", "s3(2)l-d", "s4(2)l-f",
		"sw-leaf-a(1)a1,a2", "sw-leaf-b(1)a3",
		"z1(3)s1,s2", "z2(3)s3,s4",
	}
	if diff := cmp.Diff(want, build(t, merged).Outline()); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}
