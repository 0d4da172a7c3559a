package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// honestView is what the tree says of honest nodes: each node's path up to the root (name and tier of every
// domain, closest first), and the honest nodes of each domain that holds honest nodes directly (a node that
// moves itself, in or out, is no honest node).
func honestView(t *Tree, honest []string) map[string]string {
	out := map[string]string{}
	for _, n := range honest {
		path := t.PathOf(n)
		var steps []string
		for _, d := range path {
			steps = append(steps, fmt.Sprintf("%s(%d)", d.Name, d.Tier))
		}
		out["node "+n] = strings.Join(steps, " < ")
		if len(path) > 0 {
			members := slices.DeleteFunc(slices.Clone(path[0].Nodes), func(m string) bool { return !slices.Contains(honest, m) })
			out["domain "+path[0].Name] = strings.Join(members, ",")
		}
	}
	return out
}

// nodeNames returns the names of nodes, but those in skip.
func nodeNames(nodes []NodeEvidence, skip ...NodeEvidence) []string {
	var out []string
	for _, e := range nodes {
		if !slices.ContainsFunc(skip, func(s NodeEvidence) bool { return s.Node == e.Node }) {
			out = append(out, e.Node)
		}
	}
	return out
}

// linkedTo returns e cabled to the switch with identifier id, which it calls name.
func linkedTo(e NodeEvidence, id, name string) NodeEvidence {
	e.Links = []SwitchLink{{SwitchID: id, SwitchName: name}}
	return e
}

// withSub returns e with NVLink sub-domain sub.
func withSub(e NodeEvidence, sub string) NodeEvidence {
	e.NVLinkSubDomain = sub
	return e
}

// TestHostileNVLinkClaimsMoveNoOtherNode: a node's NVLink evidence places that node only. The honest nodes
// keep their domains, parents, tiers and fellow members when hostile (or broken) evidence is added: nodes of
// another leaf claiming their NVLink domain, in any spelling; a node without an NVLink domain (or sub-domain)
// in their leaf; a switch named like their NVLink domain. The tree after is built as the aggregator builds it,
// keeping the names of the tree before (KeepNames); where noTie is set, Build alone already keeps them.
func TestHostileNVLinkClaimsMoveNoOtherNode(t *testing.T) {
	const nvlA, nvlB, nvlC = "aaaa.1", "bbbb.1", "cccc.1"
	unit1 := trays("u1", 16, nvlA, "", "leaf-1")
	unit2 := trays("u2", 16, nvlB, "", "leaf-2")
	twoUnits := slices.Concat(unit1, unit2)
	mixedLeaf := slices.Concat(trays("u1a", 8, nvlA, "", "leaf-1"), trays("u1c", 8, nvlC, "", "leaf-1"), unit2)
	smallDomain := slices.Concat(trays("u1a", 2, nvlA, "", "leaf-1"), trays("u1c", 8, nvlC, "", "leaf-1"), unit2)
	solo := slices.Concat(trays("u1a", 8, nvlA, "", "leaf-1"), []NodeEvidence{gpu("solo", "ssss.1", "leaf-1")}, unit2)
	claim := func(e NodeEvidence, nvl string) NodeEvidence { e.NVLinkDomain = nvl; return e }
	tests := []struct {
		name    string
		honest  []NodeEvidence
		hostile []NodeEvidence // added, or replacing the honest evidence of the same node
		links   []SwitchEdge   // cables added with the hostile evidence
		noLinks bool           // no switch links at all: every leaf below the root
		opts    BuildOptions
		// noTie: Build alone keeps the honest nodes' places, without the names of the tree before.
		noTie bool
		// wantHostile is where each hostile node lands: the domain that holds it.
		wantHostile map[string]string
	}{{
		name:        "(a) three nodes of unit 2 claim unit 1's NVLink domain: a part in leaf 2, unit 1's domain as it was",
		honest:      twoUnits,
		hostile:     []NodeEvidence{claim(unit2[0], nvlA), claim(unit2[1], nvlA), claim(unit2[2], nvlA)},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "nvl-aaaa-1-leaf-2", "u2-t02": "nvl-aaaa-1-leaf-2", "u2-t03": "nvl-aaaa-1-leaf-2"},
	}, {
		name:        "(a) three nodes of unit 2 claim a two-node domain of unit 1, after it: no home, the current names stay",
		honest:      smallDomain,
		hostile:     []NodeEvidence{claim(unit2[0], nvlA), claim(unit2[1], nvlA), claim(unit2[2], nvlA)},
		opts:        BuildOptions{AcceleratorDomains: true},
		wantHostile: map[string]string{"u2-t01": "nvl-aaaa-1-leaf-2", "u2-t02": "nvl-aaaa-1-leaf-2", "u2-t03": "nvl-aaaa-1-leaf-2"},
	}, {
		name:        "(a) without switch links: the same",
		honest:      twoUnits,
		noLinks:     true,
		hostile:     []NodeEvidence{claim(unit2[0], nvlA), claim(unit2[1], nvlA), claim(unit2[2], nvlA)},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "nvl-aaaa-1-leaf-2", "u2-t02": "nvl-aaaa-1-leaf-2", "u2-t03": "nvl-aaaa-1-leaf-2"},
	}, {
		name:        "(b) one node shares a singleton's NVLink domain: the singleton stays in its leaf, in its domain",
		honest:      solo,
		hostile:     []NodeEvidence{claim(unit2[0], "ssss.1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		wantHostile: map[string]string{"u2-t01": "nvl-ssss-1-leaf-2"},
	}, {
		name:        "(b) two nodes share it: the same",
		honest:      solo,
		hostile:     []NodeEvidence{claim(unit2[0], "ssss.1"), claim(unit2[1], "ssss.1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		wantHostile: map[string]string{"u2-t01": "nvl-ssss-1-leaf-2", "u2-t02": "nvl-ssss-1-leaf-2"},
	}, {
		name:        "(c) a case variant of the domain's ID is the same domain: a part in its own leaf",
		honest:      twoUnits,
		hostile:     []NodeEvidence{claim(unit2[0], "AAAA.1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "nvl-aaaa-1-leaf-2"},
	}, {
		name:        "(c) the honest nodes spell it in capitals, the claimant in small letters: the same",
		honest:      slices.Concat(trays("u1", 16, "AAAA.1", "", "leaf-1"), unit2),
		hostile:     []NodeEvidence{claim(unit2[0], "aaaa.1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "nvl-aaaa-1-leaf-2"},
	}, {
		name:        "(c) an ID that only names like it (aaaa-1): the larger domain keeps the name",
		honest:      twoUnits,
		hostile:     []NodeEvidence{claim(unit2[0], "AAAA_1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": UniqueName("nvl-aaaa-1")},
	}, {
		name:        "(d) a node without an NVLink domain joins a leaf with two: it stands alone, the leaf keeps its tier and domains",
		honest:      mixedLeaf,
		hostile:     []NodeEvidence{gpu("x", "", "leaf-1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"x": "x"},
	}, {
		name:        "(d) a node of the leaf loses its NVLink domain: only that node moves",
		honest:      mixedLeaf,
		hostile:     []NodeEvidence{claim(mixedLeaf[7], "")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u1a-t08": "u1a-t08"},
	}, {
		name:        "(d) the only leaf with NVLink domains gets a node without one: no tier changes anywhere",
		honest:      slices.Concat(trays("u1", 4, nvlA, "", "leaf-1"), trays("cpu", 4, "", "", "leaf-2")),
		hostile:     []NodeEvidence{gpu("x", "", "leaf-1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"x": "x"},
	}, {
		name:        "a node without a sub-domain joins a rack's domain: the rack's sub-domain stays",
		honest:      slices.Concat(trays("r1", 9, nvlA, "rack-1", "leaf-1"), trays("r2", 9, nvlA, "rack-2", "leaf-1")),
		hostile:     []NodeEvidence{gpu("x", nvlA, "leaf-1")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"x": "x"},
	}, {
		name:        "a node with a sub-domain in a fabric without them adds no tier",
		honest:      twoUnits,
		hostile:     []NodeEvidence{withSub(unit2[0], "rack-x")},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "nvl-bbbb-1"},
	}, {
		name:        "a node names its own switch like unit 1's NVLink domain: the switch gives the name up",
		honest:      twoUnits,
		hostile:     []NodeEvidence{linkedTo(gpu("x", nvlB), "mac:x", "nvl-aaaa-1")},
		links:       []SwitchEdge{{A: "spine", B: "mac:x", Source: "ib"}},
		opts:        BuildOptions{AcceleratorDomains: true},
		noTie:       true,
		wantHostile: map[string]string{"x": "nvl-bbbb-1-" + UniqueName("mac:x")}, // its leaf named after its switch
	}, {
		name:        "without accelerator domains NVLink claims change nothing",
		honest:      twoUnits,
		hostile:     []NodeEvidence{claim(unit2[0], nvlA), claim(unit2[1], "AAAA.1"), claim(unit2[2], ""), gpu("x", "", "leaf-1")},
		noTie:       true,
		wantHostile: map[string]string{"u2-t01": "leaf-2", "u2-t02": "leaf-2", "u2-t03": "leaf-2", "x": "leaf-1"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			links := cables("spine", "leaf-1", "leaf-2")
			if tc.noLinks {
				links = nil
			}
			honest := Input{Nodes: tc.honest, SwitchLinks: links}
			before, _ := Build(honest, tc.opts)
			all := withNodes(honest, tc.hostile...)
			all.SwitchLinks = slices.Concat(links, tc.links)
			after, probs := Build(all, tc.opts)
			if err := after.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			names := nodeNames(tc.honest, tc.hostile...)
			want := honestView(before, names)
			if tc.noTie {
				if diff := cmp.Diff(want, honestView(after, names)); diff != "" {
					t.Errorf("Build moved honest nodes (-before +after):\n%s\nproblems: %v", diff, probs)
				}
			}
			KeepNames(after, before)
			if err := after.Validate(); err != nil {
				t.Fatalf("invalid tree after KeepNames: %v", err)
			}
			if diff := cmp.Diff(want, honestView(after, names)); diff != "" {
				t.Errorf("honest nodes moved (-before +after):\n%s\nproblems: %v", diff, probs)
			}
			got := map[string]string{}
			for n := range tc.wantHostile {
				if p := after.PathOf(n); len(p) > 0 {
					got[n] = p[0].Name
				}
			}
			if diff := cmp.Diff(tc.wantHostile, got); diff != "" {
				t.Errorf("hostile nodes (-want +got):\n%s\n%v", diff, after.Outline())
			}
		})
	}
}

// TestHostileNVLinkClaimsAreSaid: the nodes set apart are the ones a Problem names, never the honest ones.
func TestHostileNVLinkClaimsAreSaid(t *testing.T) {
	honest := slices.Concat(trays("u1", 16, "aaaa.1", "", "leaf-1"), trays("u2", 16, "bbbb.1", "", "leaf-2"))
	claimant := honest[16]
	claimant.NVLinkDomain = "AAAA.1"
	in := withNodes(Input{Nodes: honest, SwitchLinks: cables("spine", "leaf-1", "leaf-2")}, claimant, gpu("x", "", "leaf-1"))
	_, probs := Build(in, BuildOptions{AcceleratorDomains: true})
	var got []string
	for _, p := range probs {
		got = append(got, p.Node)
	}
	if diff := cmp.Diff([]string{"x", "u2-t01"}, got); diff != "" {
		t.Errorf("nodes named in problems (-want +got):\n%s\n%v", diff, probs)
	}
}
