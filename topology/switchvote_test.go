package topology

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// railReport is a node's own report of its two rail leaves, mac:1 and mac:2, which it calls rail1 and rail2
// ("" for no name); with phantom, also of a third switch only it reports, mac:0, called phantom.
func railReport(node, rail1, rail2, phantom string) NodeEvidence {
	e := NodeEvidence{Node: node, Source: "reports", SelfReported: true, Links: []SwitchLink{
		{SwitchID: "mac:1", SwitchName: rail1}, {SwitchID: "mac:2", SwitchName: rail2}}}
	if phantom != "" {
		e.Links = append(e.Links, SwitchLink{SwitchID: "mac:0", SwitchName: phantom})
	}
	return e
}

// railReports is count nodes "<prefix>1", … reporting their rails as rail1 and rail2.
func railReports(prefix string, count int, rail1, rail2 string) []NodeEvidence {
	var out []NodeEvidence
	for i := 1; i <= count; i++ {
		out = append(out, railReport(fmt.Sprintf("%s%d", prefix, i), rail1, rail2, ""))
	}
	return out
}

// captureNames is what a capture says of the two rails: their names.
func captureNames(rail1, rail2 string) []SwitchName {
	return []SwitchName{{SwitchID: "mac:1", Name: rail1, Source: "ibnetdiscover"}, {SwitchID: "mac:2", Name: rail2, Source: "ibnetdiscover"}}
}

// TestNamesFollowTheVote: names are decided by the trust order on every pass (fabric-wide sources, then most of
// the nodes that report a switch, each counted once), and KeepNames keeps a previous name only while that vote
// does not reject it; honest names stay: a minority never renames, a tie and a name no longer given keep the
// current one.
func TestNamesFollowTheVote(t *testing.T) {
	owned := railReport("x0", "0wned", "0wned", "")
	tests := []struct {
		name   string
		passes []Input
		want   []string // the rail group's name after each pass
		// wantReplaced are the names the last pass did not keep.
		wantReplaced []ReplacedName
	}{{
		name: "one node names the leaf first, five honest reports follow: the honest name, and it stays",
		passes: []Input{
			{Nodes: []NodeEvidence{owned}},
			{Nodes: append(railReports("h", 5, "leaf-a", "leaf-b"), owned)},
			{Nodes: append(railReports("h", 5, "leaf-a", "leaf-b"), owned)},
		},
		want: []string{"0wned-rails", "leaf-a-rails", "leaf-a-rails"},
	}, {
		name: "one node names the leaf first, a fabric-wide source knows the switches: its name",
		passes: []Input{
			{Nodes: []NodeEvidence{owned}},
			{Nodes: []NodeEvidence{owned}, SwitchNames: captureNames("ib-leaf-1", "ib-leaf-2")},
		},
		want:         []string{"0wned-rails", "ib-leaf-1-rails"},
		wantReplaced: []ReplacedName{{Domain: "ib-leaf-1-rails", Previous: "0wned-rails"}},
	}, {
		name: "the vote replaces the first reporter's name the pass the honest reports come",
		passes: []Input{
			{Nodes: []NodeEvidence{owned}},
			{Nodes: append(railReports("h", 5, "leaf-a", "leaf-b"), owned)},
		},
		want:         []string{"0wned-rails", "leaf-a-rails"},
		wantReplaced: []ReplacedName{{Domain: "leaf-a-rails", Previous: "0wned-rails"}},
	}, {
		name: "a node that adds a switch of its own to the leaf and names it: the domain's vote ignores it",
		passes: []Input{
			{Nodes: append(railReports("h", 5, "leaf-a", "leaf-b"), railReport("x0", "0wned", "0wned", "0wned"))},
		},
		want: []string{"leaf-a-rails"},
	}, {
		name: "a rename by a minority of nodes never renames",
		passes: []Input{
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b")},
			{Nodes: append(railReports("h", 6, "leaf-a", "leaf-b"), railReports("x", 2, "evil", "evil")...)},
		},
		want: []string{"leaf-a-rails", "leaf-a-rails"},
	}, {
		name: "a tie keeps the current name",
		passes: []Input{
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b")},
			{Nodes: append(railReports("h", 3, "leaf-a", "leaf-b"), railReports("x", 3, "evil", "evil")...)},
		},
		want: []string{"leaf-a-rails", "leaf-a-rails"},
	}, {
		name: "a name no longer given is kept",
		passes: []Input{
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b")},
			{Nodes: railReports("h", 6, "", "")},
		},
		want: []string{"leaf-a-rails", "leaf-a-rails"},
	}, {
		name: "a majority of the reports renames",
		passes: []Input{
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b")},
			{Nodes: append(railReports("h", 2, "leaf-a", "leaf-b"), railReports("x", 4, "leaf-z", "leaf-y")...)},
		},
		want:         []string{"leaf-a-rails", "leaf-y-rails"},
		wantReplaced: []ReplacedName{{Domain: "leaf-y-rails", Previous: "leaf-a-rails"}},
	}, {
		name: "a fabric-wide source outranks the reports' name",
		passes: []Input{
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b")},
			{Nodes: railReports("h", 6, "leaf-a", "leaf-b"), SwitchNames: captureNames("ib-leaf-1", "ib-leaf-2")},
		},
		want:         []string{"leaf-a-rails", "ib-leaf-1-rails"},
		wantReplaced: []ReplacedName{{Domain: "ib-leaf-1-rails", Previous: "leaf-a-rails"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var prev *Tree
			var got []string
			var replaced []ReplacedName
			for _, in := range tc.passes {
				tree, _ := Build(in, BuildOptions{})
				replaced = KeepNames(tree, prev)
				if err := tree.Validate(); err != nil {
					t.Fatalf("invalid tree: %v", err)
				}
				got = append(got, leafOf(tree, in.Nodes[0].Node))
				prev = tree
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names after each pass (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReplaced, replaced); diff != "" {
				t.Errorf("names not kept (-want +got):\n%s", diff)
			}
		})
	}
}
