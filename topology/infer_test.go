package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MergeSources ranks the inputs by priority whatever order they come in, folds them with each one's own rule
// and keeps every conflict; names not in the priority list come last, by name.
func TestMergeSources(t *testing.T) {
	node := func(name, source, sw string) NodeEvidence {
		return NodeEvidence{Node: name, Source: source, Links: []SwitchLink{{SwitchID: "guid:" + sw}}}
	}
	reports := SourceInput{Name: "reports", Input: Input{Nodes: []NodeEvidence{node("n1", "reports", "a1")}}}
	ufm := SourceInput{Name: "ufm", Input: Input{Nodes: []NodeEvidence{node("n2", "ufm", "b1")}}}
	capture := SourceInput{Name: "ibnetdiscover", Input: Input{Nodes: []NodeEvidence{node("n2", "ibnetdiscover", "a1"), node("n3", "ibnetdiscover", "a1")}}}
	var belowCalls []string
	extra := SourceInput{Name: "extra", Input: Input{Nodes: []NodeEvidence{node("n4", "extra", "c1")}},
		Merge: func(merged, in Input) (Input, []Conflict) {
			for _, n := range merged.Nodes {
				belowCalls = append(belowCalls, n.Node)
			}
			return Merge(merged, in)
		}}
	for _, tc := range []struct {
		name          string
		inputs        []SourceInput
		priority      []string
		wantNodes     []string // Node/Source, in merged order
		wantConflicts []Conflict
		wantBelow     []string // the nodes extra's rule was handed
	}{
		{"UFM over the capture", []SourceInput{capture, extra, ufm, reports}, []string{"reports", "ufm", "ibnetdiscover"},
			[]string{"n1/reports", "n2/ufm", "n3/ibnetdiscover", "n4/extra"},
			[]Conflict{{Node: "n2", Kept: "ufm", Dropped: "ibnetdiscover"}}, []string{"n1", "n2", "n3"}},
		{"the capture over UFM", []SourceInput{ufm, reports, capture, extra}, []string{"reports", "ibnetdiscover", "ufm"},
			[]string{"n1/reports", "n2/ibnetdiscover", "n3/ibnetdiscover", "n4/extra"},
			[]Conflict{{Node: "n2", Kept: "ibnetdiscover", Dropped: "ufm"}}, []string{"n1", "n2", "n3"}},
		{"unlisted names last, by name", []SourceInput{ufm, extra, capture}, []string{"reports"},
			[]string{"n4/extra", "n2/ibnetdiscover", "n3/ibnetdiscover"}, // extra, then ibnetdiscover, then ufm
			[]Conflict{{Node: "n2", Kept: "ibnetdiscover", Dropped: "ufm"}}, nil},
		{"no input", nil, []string{"reports"}, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			belowCalls = nil
			got, conflicts := MergeSources(tc.inputs, tc.priority)
			var nodes []string
			for _, n := range got.Nodes {
				nodes = append(nodes, n.Node+"/"+n.Source)
			}
			if diff := cmp.Diff(tc.wantNodes, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBelow, belowCalls); diff != "" {
				t.Errorf("extra's merge rule was handed (-want +got):\n%s", diff)
			}
		})
	}
}

// Infer is MergeSources then Build: the winner's placement is the tree's.
func TestInfer(t *testing.T) {
	in := func(source, sw string, nodes ...string) SourceInput {
		var ev []NodeEvidence
		for _, n := range nodes {
			ev = append(ev, NodeEvidence{Node: n, Source: source, Links: []SwitchLink{{SwitchID: "guid:" + sw, SwitchName: source + "-leaf"}}})
		}
		return SourceInput{Name: source, Input: Input{Nodes: ev}}
	}
	inputs := []SourceInput{in("ibnetdiscover", "0a", "n1", "n2"), in("ufm", "0b", "n2", "n3")}
	tree, problems, conflicts := Infer(inputs, []string{"ufm", "ibnetdiscover"}, BuildOptions{})
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if diff := cmp.Diff([]Conflict{{Node: "n2", Kept: "ufm", Dropped: "ibnetdiscover"}}, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	leaf := func(node string) string {
		if p := tree.PathOf(node); len(p) > 0 {
			return p[0].Name
		}
		return ""
	}
	if leaf("n2") == "" || leaf("n2") != leaf("n3") || leaf("n2") == leaf("n1") {
		t.Errorf("n2 is in %q, n3 in %q, n1 in %q: want n2 with n3 (ufm's placement), apart from n1", leaf("n2"), leaf("n3"), leaf("n1"))
	}
}
