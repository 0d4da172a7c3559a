package topology

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func link(id, name string) SwitchLink { return SwitchLink{SwitchID: id, SwitchName: name} }

func TestBuild(t *testing.T) {
	tests := []struct {
		name       string
		evidence   []NodeEvidence
		wantLeaves map[string][]string // leaf name -> nodes
		wantUnpl   []string
		wantProbs  []string // substrings of problem reasons
	}{{
		name: "two leaves under one root",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:1", "Leaf-A")}},
			{Node: "n2", Links: []SwitchLink{link("mac:1", "Leaf-A")}},
			{Node: "n3", Links: []SwitchLink{link("mac:2", "Leaf-B")}},
		},
		wantLeaves: map[string][]string{"leaf-a": {"n1", "n2"}, "leaf-b": {"n3"}},
	}, {
		name: "rail leaves sharing hosts form one domain",
		evidence: []NodeEvidence{
			{Node: "h1", Links: []SwitchLink{link("g:r0", "rail0"), link("g:r1", "rail1")}},
			{Node: "h2", Links: []SwitchLink{link("g:r0", "rail0"), link("g:r1", "rail1")}},
			{Node: "h3", Links: []SwitchLink{link("g:r2", "rail0-su2")}},
		},
		wantLeaves: map[string][]string{"rail0-rails": {"h1", "h2"}, "rail0-su2": {"h3"}},
	}, {
		name: "a host with one rail link down still joins its domain",
		evidence: []NodeEvidence{
			{Node: "h1", Links: []SwitchLink{link("g:r0", "rail0"), link("g:r1", "rail1")}},
			{Node: "h2", Links: []SwitchLink{link("g:r1", "rail1")}},
		},
		wantLeaves: map[string][]string{"rail0-rails": {"h1", "h2"}},
	}, {
		name: "a host cabled by mistake to another unit's leaf joins neither unit to the other",
		evidence: []NodeEvidence{
			{Node: "a1", Source: "reports", Links: []SwitchLink{link("g:a0", "su1-r0"), link("g:a1", "su1-r1")}},
			{Node: "a2", Source: "reports", Links: []SwitchLink{link("g:a0", "su1-r0"), link("g:b1", "su2-r1")}}, // rail 1 in the wrong unit
			{Node: "a3", Source: "reports", Links: []SwitchLink{link("g:a0", "su1-r0"), link("g:a1", "su1-r1")}},
			{Node: "b1", Links: []SwitchLink{link("g:b0", "su2-r0"), link("g:b1", "su2-r1")}},
			{Node: "b2", Links: []SwitchLink{link("g:b0", "su2-r0"), link("g:b1", "su2-r1")}},
			{Node: "b3", Links: []SwitchLink{link("g:b0", "su2-r0"), link("g:b1", "su2-r1")}},
		},
		wantLeaves: map[string][]string{"su1-r0-rails": {"a1", "a2", "a3"}, "su2-r0-rails": {"b1", "b2", "b3"}},
		wantProbs:  []string{"kept with su1-r0 (g:a0) (most of its links), not with su2-r1 (g:b1)"},
	}, {
		name: "a dual-homed pair of switches is one domain",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:1", "tor-1a"), link("mac:2", "tor-1b")}},
			{Node: "n2", Links: []SwitchLink{link("mac:1", "tor-1a"), link("mac:2", "tor-1b")}},
			{Node: "n3", Links: []SwitchLink{link("mac:2", "tor-1b")}}, // one bond member down
		},
		wantLeaves: map[string][]string{"tor-1a-rails": {"n1", "n2", "n3"}},
	}, {
		name: "storage links never merge compute domains",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:1", "leaf1"), {SwitchID: "mac:s", SwitchName: "stor", Storage: true}}},
			{Node: "n2", Links: []SwitchLink{link("mac:2", "leaf2"), {SwitchID: "mac:s", SwitchName: "stor", Storage: true}}},
		},
		wantLeaves: map[string][]string{"leaf1": {"n1"}, "leaf2": {"n2"}},
	}, {
		name: "nodes without evidence are listed, not guessed",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:1", "leaf1")}},
			{Node: "lonely"},
			{Node: "storage-only", Links: []SwitchLink{{SwitchID: "mac:s", Storage: true}}},
		},
		wantLeaves: map[string][]string{"leaf1": {"n1"}},
		wantUnpl:   []string{"lonely", "storage-only"},
	}, {
		name: "bad evidence is rejected with a reason",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:1", "leaf1")}},
			{Node: "", Links: []SwitchLink{link("mac:1", "leaf1")}},
			{Node: "Not_DNS", Links: []SwitchLink{link("mac:1", "leaf1")}},
			{Node: "n2", Links: []SwitchLink{link("", "leaf1")}},
			{Node: "n1", Source: "other", Links: []SwitchLink{link("mac:9", "leaf9")}},
		},
		wantLeaves: map[string][]string{"leaf1": {"n1"}},
		wantProbs:  []string{"empty node name", "DNS-1123", "empty switch identifier", "evidence given twice"},
	}, {
		name: "unnamed switches are named after their identifier",
		evidence: []NodeEvidence{
			{Node: "n1", Links: []SwitchLink{link("mac:02:00:00:00:00:01", "")}},
		},
		wantLeaves: map[string][]string{"mac-02-00-00-00-00-01": {"n1"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := Build(Input{Nodes: tc.evidence}, BuildOptions{})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			got := map[string][]string{}
			for _, d := range tree.Domains {
				if d.Tier == 1 {
					got[d.Name] = d.Nodes
					if d.Parent != "fabric" {
						t.Errorf("leaf %s has parent %q, want fabric", d.Name, d.Parent)
					}
				}
			}
			if diff := cmp.Diff(tc.wantLeaves, got); diff != "" {
				t.Errorf("leaves (-want +got):\n%s", diff)
			}
			if root := tree.Domains["fabric"]; root == nil || root.Tier != 2 || len(root.Children) != len(tc.wantLeaves) {
				t.Errorf("root = %+v, want tier 2 with %d children", root, len(tc.wantLeaves))
			}
			if diff := cmp.Diff(tc.wantUnpl, tree.Unplaced); diff != "" {
				t.Errorf("unplaced (-want +got):\n%s", diff)
			}
			if len(probs) != len(tc.wantProbs) {
				t.Fatalf("problems = %v, want %d", probs, len(tc.wantProbs))
			}
			for i, want := range tc.wantProbs {
				if !strings.Contains(probs[i].Reason, want) {
					t.Errorf("problem %d = %q, want it to mention %q", i, probs[i].Reason, want)
				}
			}
		})
	}
}

func TestBuildIsOrderIndependent(t *testing.T) {
	var ev []NodeEvidence
	for i := range 40 {
		sw := string(rune('a' + i%5))
		ev = append(ev, NodeEvidence{Node: "n" + string(rune('a'+i/26)) + string(rune('a'+i%26)),
			Links: []SwitchLink{link("id-"+sw, "leaf-"+sw)}})
	}
	want, _ := Build(Input{Nodes: ev}, BuildOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		r.Shuffle(len(ev), func(i, j int) { ev[i], ev[j] = ev[j], ev[i] })
		got, _ := Build(Input{Nodes: ev}, BuildOptions{})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("a reordered input gave a different tree (-want +got):\n%s", diff)
		}
	}
}

func TestBuildNameClashFallsBackToHash(t *testing.T) {
	tree, _ := Build(Input{Nodes: []NodeEvidence{
		{Node: "n1", Links: []SwitchLink{link("id-1", "leaf.1")}},
		{Node: "n2", Links: []SwitchLink{link("id-2", "leaf_1")}},
	}}, BuildOptions{})
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tree.Domains) != 3 {
		t.Fatalf("want 2 distinct leaves and a root, got %v", tree.Names())
	}
}
