package topology

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// host returns evidence for a node cabled to the given switches (switch IDs double as names).
func host(name string, switches ...string) NodeEvidence {
	e := NodeEvidence{Node: name, Source: "test"}
	for _, s := range switches {
		e.Links = append(e.Links, SwitchLink{SwitchID: s, SwitchName: s})
	}
	return e
}

// cables returns a switch link from a to each of bs.
func cables(a string, bs ...string) []SwitchEdge {
	var out []SwitchEdge
	for _, b := range bs {
		out = append(out, SwitchEdge{A: a, B: b, AName: a, BName: b, Source: "ib"})
	}
	return out
}

func join(parts ...[]SwitchEdge) []SwitchEdge { return slices.Concat(parts...) }

func TestBuildTiers(t *testing.T) {
	tests := []struct {
		name      string
		in        Input
		want      []string
		wantProbs int
	}{{
		name: "two tiers: one spine group becomes the root",
		in: Input{
			Nodes:       []NodeEvidence{host("n1", "leaf1"), host("n2", "leaf2")},
			SwitchLinks: join(cables("spine1", "leaf1", "leaf2"), cables("spine2", "leaf1", "leaf2")),
		},
		want: []string{"fabric(2)leaf1,leaf2", "leaf1(1)n1", "leaf2(1)n2"},
	}, {
		name: "three tiers: pods under spine groups, cores on top",
		in: Input{
			Nodes: []NodeEvidence{host("a1", "la1"), host("a2", "la2"), host("b1", "lb1"), host("b2", "lb2")},
			SwitchLinks: join(
				cables("sa1", "la1", "la2"), cables("sa2", "la1", "la2"),
				cables("sb1", "lb1", "lb2"), cables("sb2", "lb1", "lb2"),
				cables("core1", "sa1", "sa2", "sb1", "sb2"), cables("core2", "sa1", "sa2", "sb1", "sb2")),
		},
		want: []string{"fabric(3)sa1-spines,sb1-spines", "la1(1)a1", "la2(1)a2", "lb1(1)b1", "lb2(1)b2",
			"sa1-spines(2)la1,la2", "sb1-spines(2)lb1,lb2"},
	}, {
		name: "disconnected pods get a common root one tier up",
		in: Input{
			Nodes:       []NodeEvidence{host("a1", "la1"), host("a2", "la2"), host("b1", "lb1"), host("b2", "lb2")},
			SwitchLinks: join(cables("sa", "la1", "la2"), cables("sb", "lb1", "lb2")),
		},
		want: []string{"fabric(3)sa,sb", "la1(1)a1", "la2(1)a2", "lb1(1)b1", "lb2(1)b2", "sa(2)la1,la2", "sb(2)lb1,lb2"},
	}, {
		name: "a spine above a single leaf at the top adds nothing",
		in: Input{
			Nodes:       []NodeEvidence{host("a1", "la1"), host("b1", "lb1")},
			SwitchLinks: join(cables("sa", "la1"), cables("sb", "lb1")),
		},
		want: []string{"fabric(2)la1,lb1", "la1(1)a1", "lb1(1)b1"},
	}, {
		name: "a leaf with no known host is not taken for a higher tier",
		in: Input{
			Nodes: []NodeEvidence{host("a1", "la1"), host("a2", "la2")},
			SwitchLinks: join(cables("sa", "la1", "la2"), cables("core", "sa", "sb"),
				cables("sb", "hostless1", "hostless2"), cables("hostless1", "hostless2")),
		},
		want: []string{"fabric(2)la1,la2", "la1(1)a1", "la2(1)a2"},
	}, {
		name: "a leaf with no uplink hangs below the root beside deeper branches",
		in: Input{
			Nodes:       []NodeEvidence{host("a1", "la1"), host("a2", "la2"), host("x", "lonely-leaf")},
			SwitchLinks: cables("sa", "la1", "la2"),
		},
		want: []string{"fabric(3)lonely-leaf,sa", "la1(1)a1", "la2(1)a2", "lonely-leaf(1)x", "sa(2)la1,la2"},
	}, {
		name: "a cable between two leaves (MLAG peer link) makes no tier",
		in: Input{
			Nodes:       []NodeEvidence{host("n1", "leaf1"), host("n2", "leaf2")},
			SwitchLinks: cables("leaf1", "leaf2"),
		},
		want: []string{"fabric(2)leaf1,leaf2", "leaf1(1)n1", "leaf2(1)n2"},
	}, {
		name: "rail-optimised leaves sharing hosts stay one domain below their spines",
		in: Input{
			Nodes: []NodeEvidence{host("h1", "r0", "r1"), host("h2", "r0", "r1"), host("h3", "r0b", "r1b")},
			SwitchLinks: join(cables("s0", "r0", "r1"), cables("s1", "r0b", "r1b"),
				cables("core", "s0", "s1")),
		},
		want: []string{"fabric(3)s0,s1", "r0-rails(1)h1,h2", "r0b-rails(1)h3", "s0(2)r0-rails", "s1(2)r0b-rails"},
	}, {
		name: "a storage switch cabled to a compute leaf is no spine",
		in: Input{
			Nodes: []NodeEvidence{
				{Node: "n1", Links: []SwitchLink{{SwitchID: "leaf1"}, {SwitchID: "stor", Storage: true}}},
				{Node: "n2", Links: []SwitchLink{{SwitchID: "leaf2"}, {SwitchID: "stor", Storage: true}}},
			},
			SwitchLinks: cables("stor", "leaf1", "leaf2"),
		},
		want: []string{"fabric(2)leaf1,leaf2", "leaf1(1)n1", "leaf2(1)n2"},
	}, {
		name: "irregular lab fabric: a spine behind another spine still gives a valid tree",
		in: Input{
			Nodes: []NodeEvidence{host("n1", "leaf1"), host("n2", "leaf2")},
			SwitchLinks: join(cables("spine1", "leaf1"), cables("spine2", "leaf2"),
				cables("spine1", "spine2"), cables("far", "spine2")),
		},
		// A cable between two switches of one tier joins nothing: each spine above one leaf collapses.
		want: []string{"fabric(2)leaf1,leaf2", "leaf1(1)n1", "leaf2(1)n2"},
	}, {
		name: "a switch link with an empty end is reported and ignored",
		in: Input{
			Nodes:       []NodeEvidence{host("n1", "leaf1")},
			SwitchLinks: []SwitchEdge{{A: "leaf1", B: "", Source: "ib"}},
		},
		want:      []string{"fabric(2)leaf1", "leaf1(1)n1"},
		wantProbs: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := Build(tc.in, BuildOptions{})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if len(probs) != tc.wantProbs {
				t.Errorf("problems = %v, want %d", probs, tc.wantProbs)
			}
		})
	}
}

func TestBuildTiersNamesAndSwitches(t *testing.T) {
	tree, _ := Build(Input{
		Nodes: []NodeEvidence{host("a1", "la1"), host("a2", "la2"), host("b1", "lb1"), host("b2", "lb2")},
		SwitchLinks: join(cables("sa1", "la1", "la2"), cables("sa2", "la1", "la2"), cables("sb", "lb1", "lb2"),
			cables("core", "sa1", "sb")),
	}, BuildOptions{RootName: "Cluster A"})
	root := tree.Domains["cluster-a"]
	if root == nil || root.Tier != 3 || root.TierName != TierNameRoot || !cmp.Equal(root.Switches, []string{"core"}) {
		t.Fatalf("root = %+v, want cluster-a, tier 3, standing for switch core", root)
	}
	spine := tree.Domains["sa1-spines"]
	if spine == nil || spine.TierName != TierNameSpine || spine.Source != "ib" || !cmp.Equal(spine.Switches, []string{"sa1", "sa2"}) {
		t.Fatalf("spine group = %+v", spine)
	}
}

func TestBuildTiersIsOrderIndependent(t *testing.T) {
	in := Input{
		Nodes: []NodeEvidence{host("a1", "la1"), host("a2", "la2"), host("b1", "lb1"), host("c1", "lc1")},
		SwitchLinks: join(cables("sa1", "la1", "la2"), cables("sa2", "la1", "la2"), cables("sb", "lb1"),
			cables("core", "sa1", "sb"), cables("la1", "la2")),
	}
	want, _ := Build(in, BuildOptions{})
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		r.Shuffle(len(in.Nodes), func(i, j int) { in.Nodes[i], in.Nodes[j] = in.Nodes[j], in.Nodes[i] })
		r.Shuffle(len(in.SwitchLinks), func(i, j int) {
			in.SwitchLinks[i], in.SwitchLinks[j] = in.SwitchLinks[j], in.SwitchLinks[i]
		})
		for i := range in.SwitchLinks {
			if r.IntN(2) == 0 {
				e := &in.SwitchLinks[i]
				e.A, e.B, e.AName, e.BName = e.B, e.A, e.BName, e.AName
			}
		}
		if got, _ := Build(in, BuildOptions{}); !cmp.Equal(got, want) {
			t.Fatalf("a reordered input gave a different tree (-want +got):\n%s", cmp.Diff(want, got))
		}
	}
}

func TestSwitchIDNormalisesGUIDs(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"guid", "0x0002C903000A1B2C"}: "guid:0002c903000a1b2c",
		{"guid", "2c903000a1b2c"}:      "guid:0002c903000a1b2c",
		{"guid", "not-hex"}:            "guid:not-hex",
		{"mac", "02:00:00:00:00:01"}:   "mac:02:00:00:00:00:01",
		{"", "plain"}:                  "plain",
	} {
		if got := SwitchID(in[0], in[1]); got != want {
			t.Errorf("SwitchID(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}
