package topology

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

// gpu returns evidence for a node of NVLink domain nvl ("" for none) cabled to the given switches.
func gpu(name, nvl string, switches ...string) NodeEvidence {
	e := host(name, switches...)
	e.NVLinkDomain = nvl
	return e
}

// named returns e with every switch it links to called name.
func named(e NodeEvidence, name string) NodeEvidence {
	for i := range e.Links {
		e.Links[i].SwitchName = name
	}
	return e
}

// twoLeafNVLink is two leaves below one spine, each with two NVLink domains of two nodes.
func twoLeafNVLink() Input {
	return Input{
		Nodes: []NodeEvidence{
			gpu("a1", "c1.1", "la"), gpu("a2", "c1.1", "la"), gpu("a3", "c1.2", "la"), gpu("a4", "c1.2", "la"),
			gpu("b1", "c2.1", "lb"), gpu("b2", "c2.1", "lb"), gpu("b3", "c2.2", "lb"), gpu("b4", "c2.2", "lb"),
		},
		SwitchLinks: cables("spine", "la", "lb"),
	}
}

// withNodes returns in with nodes replacing the evidence of the same name, or added.
func withNodes(in Input, nodes ...NodeEvidence) Input {
	out := Input{SwitchLinks: in.SwitchLinks}
	replaced := map[string]bool{}
	for _, e := range in.Nodes {
		for _, n := range nodes {
			if n.Node == e.Node {
				e, replaced[n.Node] = n, true
			}
		}
		out.Nodes = append(out.Nodes, e)
	}
	for _, n := range nodes {
		if !replaced[n.Node] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out
}

func TestBuildAcceleratorDomains(t *testing.T) {
	longDomain := strings.Repeat("0123456789abcdef", 5) + ".7"
	tests := []struct {
		name         string
		in           Input
		want         []string
		wantUnplaced []string
		wantProbs    []string // substrings of each problem's String(), in order
	}{{
		name: "two leaves with two NVLink domains each: accelerator domains at tier 1, switch tiers one up",
		in:   twoLeafNVLink(),
		want: []string{"fabric(3)la,lb", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)nvl-c2-1,nvl-c2-2",
			"nvl-c1-1(1)a1,a2", "nvl-c1-2(1)a3,a4", "nvl-c2-1(1)b1,b2", "nvl-c2-2(1)b3,b4"},
	}, {
		name: "a node without an NVLink domain stands alone in an accelerator domain named after it; the others keep theirs and the tiers stay",
		in:   withNodes(twoLeafNVLink(), gpu("b4", "", "lb")),
		want: []string{"fabric(3)la,lb", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)b4,nvl-c2-1,nvl-c2-2",
			"b4(1)b4", "nvl-c1-1(1)a1,a2", "nvl-c1-2(1)a3,a4", "nvl-c2-1(1)b1,b2", "nvl-c2-2(1)b3"},
		wantProbs: []string{`node "b4" (source test): has no NVLink domain, while 3 of the 4 nodes of its leaf domain "lb" have one: it stands alone in accelerator domain "b4", named after it`},
	}, {
		name: "a node claiming another leaf's NVLink domain gets a part in its own leaf; the domain's own accelerator domain stays as it was",
		in:   withNodes(twoLeafNVLink(), gpu("b1", "c1.1", "lb"), gpu("a5", "c1.1", "la")),
		want: []string{"fabric(3)la,lb", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)nvl-c1-1-lb,nvl-c2-1,nvl-c2-2",
			"nvl-c1-1(1)a1,a2,a5", "nvl-c1-1-lb(1)b1", "nvl-c1-2(1)a3,a4", "nvl-c2-1(1)b2", "nvl-c2-2(1)b3,b4"},
		wantProbs: []string{`node "b1" (source test): claims NVLink domain "c1.1", but 3 of the 4 nodes that claim it sit in leaf domain "la" (a1, a2, a5) and this node does not; ` +
			`the claim places this node only: it stands in accelerator domain "nvl-c1-1-lb", a part of that domain below its own leaf domain "lb", and the nodes of "la" keep their accelerator domain`},
	}, {
		name: "a leaf whose one node claims another leaf's NVLink domain: that node's own part, no other node moves",
		in:   withNodes(twoLeafNVLink(), gpu("c1", "c1.2", "lc"), gpu("a5", "c1.2", "la")),
		want: []string{"fabric(4)lc,spine", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)nvl-c2-1,nvl-c2-2", "lc(2)nvl-c1-2-lc",
			"nvl-c1-1(1)a1,a2", "nvl-c1-2(1)a3,a4,a5", "nvl-c1-2-lc(1)c1", "nvl-c2-1(1)b1,b2", "nvl-c2-2(1)b3,b4", "spine(3)la,lb"},
		wantProbs: []string{`node "c1" (source test): claims NVLink domain "c1.2", but 3 of the 4 nodes that claim it sit in leaf domain "la" (a3, a4, a5)`},
	}, {
		name: "an NVLink domain split across two leaves without a home: one part below each leaf, the leaves and spine kept",
		in:   withNodes(twoLeafNVLink(), gpu("b1", "c1.1", "lb"), gpu("b2", "c1.1", "lb"), gpu("c1", "c3.1", "lc"), gpu("c2", "c3.1", "lc")),
		want: []string{"fabric(4)lc,spine", "la(2)nvl-c1-1-la,nvl-c1-2", "lb(2)nvl-c1-1-lb,nvl-c2-2", "lc(2)nvl-c3-1",
			"nvl-c1-1-la(1)a1,a2", "nvl-c1-1-lb(1)b1,b2", "nvl-c1-2(1)a3,a4", "nvl-c2-2(1)b3,b4", "nvl-c3-1(1)c1,c2", "spine(3)la,lb"},
	}, {
		name: "a spanning NVLink domain in a leaf half of whose nodes have none: its part there, and each of the others alone",
		in:   withNodes(twoLeafNVLink(), gpu("b1", "c1.1", "lb"), gpu("b2", "c1.1", "lb"), gpu("a3", "", "la"), gpu("a4", "", "la")),
		want: []string{"fabric(3)la,lb", "la(2)a3,a4,nvl-c1-1-la", "lb(2)nvl-c1-1-lb,nvl-c2-2",
			"a3(1)a3", "a4(1)a4", "nvl-c1-1-la(1)a1,a2", "nvl-c1-1-lb(1)b1,b2", "nvl-c2-2(1)b3,b4"},
		wantProbs: []string{
			`node "a3" (source test): has no NVLink domain, while 2 of the 4 nodes of its leaf domain "la" have one: it stands alone in accelerator domain "a3"`,
			`node "a4" (source test): has no NVLink domain, while 2 of the 4 nodes of its leaf domain "la" have one: it stands alone in accelerator domain "a4"`},
	}, {
		name: "no accelerator domain built: tiers stay as without the option",
		in:   withNodes(twoLeafNVLink(), gpu("a2", "", "la"), gpu("a3", "", "la"), gpu("a4", "", "la"), gpu("b1", "", "lb"), gpu("b2", "", "lb"), gpu("b3", "", "lb"), gpu("b4", "", "lb")),
		want: []string{"fabric(2)la,lb", "la(1)a1,a2,a3,a4", "lb(1)b1,b2,b3,b4"},
		wantProbs: []string{
			`node "a1" (source test): leaf domain "la" gets no accelerator domains: 3 of its 4 nodes have no NVLink domain, more than half, and a domain holds either nodes or domains; the NVLink domains of the others (a1) are not used there`},
	}, {
		name: "leaves without any NVLink domain keep their nodes without a problem",
		in:   withNodes(twoLeafNVLink(), gpu("b1", "", "lb"), gpu("b2", "", "lb"), gpu("b3", "", "lb"), gpu("b4", "", "lb")),
		want: []string{"fabric(3)la,lb", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)b1,b2,b3,b4", "nvl-c1-1(1)a1,a2", "nvl-c1-2(1)a3,a4"},
	}, {
		name:         "a node with an NVLink domain but no switch stays unplaced",
		in:           withNodes(twoLeafNVLink(), gpu("lost", "c1.1")),
		want:         []string{"fabric(3)la,lb", "la(2)nvl-c1-1,nvl-c1-2", "lb(2)nvl-c2-1,nvl-c2-2", "nvl-c1-1(1)a1,a2", "nvl-c1-2(1)a3,a4", "nvl-c2-1(1)b1,b2", "nvl-c2-2(1)b3,b4"},
		wantUnplaced: []string{"lost"},
	}, {
		name: "spellings of one NVLink domain are one domain, named after its canonical form",
		in:   Input{Nodes: []NodeEvidence{gpu("a1", "C1.1", "la"), gpu("a2", " c1.1 ", "la"), gpu("a3", "c1.1", "la"), gpu("b1", "c2_X:1", "lb"), gpu("b2", "C2-x--1", "lb")}},
		want: []string{"fabric(3)la,lb", "la(2)nvl-c1-1", "lb(2)nvl-c2-x-1", "nvl-c1-1(1)a1,a2,a3", "nvl-c2-x-1(1)b1,b2"},
	}, {
		name: "names that clash with a switch's or another NVLink domain's: the switch gives the name up, the larger domain keeps it; long ones are hashed",
		in: Input{Nodes: []NodeEvidence{named(gpu("a1", "c1.1", "mac:1"), "nvl-c1-1"), named(gpu("a2", "C1-1", "mac:1"), "nvl-c1-1"),
			named(gpu("a3", "c1.1", "mac:1"), "nvl-c1-1"), gpu("b1", longDomain, "lb")}},
		want: []string{"fabric(3)lb," + UniqueName("mac:1"), "lb(2)" + SafeName("nvl-"+longDomain),
			UniqueName("mac:1") + "(2)nvl-c1-1," + UniqueName("nvl-c1-1"), SafeName("nvl-"+longDomain) + "(1)b1",
			"nvl-c1-1(1)a1,a3", UniqueName("nvl-c1-1") + "(1)a2"},
		wantProbs: []string{`source test: domain "nvl-c1-1" has the name of an accelerator domain ("nvl-"<NVLink domain>, or a node's own name), which comes before a switch's: it is named "` + UniqueName("mac:1") + `" after its switches instead`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := Build(tc.in, BuildOptions{AcceleratorDomains: true})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(tc.want)), tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnplaced, tree.Unplaced); diff != "" {
				t.Errorf("unplaced (-want +got):\n%s", diff)
			}
			if len(probs) != len(tc.wantProbs) {
				t.Fatalf("problems = %v, want %d", probs, len(tc.wantProbs))
			}
			for i, want := range tc.wantProbs {
				if !strings.Contains(probs[i].String(), want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, probs[i], want)
				}
			}
			checkAcceleratorDomains(t, tree)
		})
	}
}

// checkAcceleratorDomains checks what Outline does not show: accelerator domains record their NVLink domain
// (or, alone for a node without one, are named after it) and source, have names short enough for a label value,
// and every other domain is above tier 1 when there are any.
func checkAcceleratorDomains(t *testing.T, tree *Tree) {
	t.Helper()
	accel := 0
	for _, d := range tree.Domains {
		if d.TierName == TierNameAccelerator {
			accel++
			alone := d.NVLinkDomain == "" && len(d.Nodes) == 1 && d.Name == SafeName(d.Nodes[0])
			if d.Tier != 1 || d.NVLinkDomain == "" && !alone || d.Source != "test" || len(d.Switches) != 0 {
				t.Errorf("accelerator domain %+v", d)
			}
			if msgs := validation.IsValidLabelValue(d.Name); len(msgs) > 0 {
				t.Errorf("accelerator domain %q is no label value: %v", d.Name, msgs)
			}
		}
	}
	for _, d := range tree.Domains {
		if accel > 0 && d.TierName != TierNameAccelerator && d.Tier < 2 {
			t.Errorf("domain %q is at tier %d next to accelerator domains", d.Name, d.Tier)
		}
	}
}

// TestBuildAcceleratorDomainsOff: without the option, NVLink domains change nothing.
func TestBuildAcceleratorDomainsOff(t *testing.T) {
	in := withNodes(twoLeafNVLink(), gpu("b4", "", "lb"))
	bare := Input{SwitchLinks: in.SwitchLinks}
	for _, e := range in.Nodes {
		e.NVLinkDomain = ""
		bare.Nodes = append(bare.Nodes, e)
	}
	got, probs := Build(in, BuildOptions{})
	want, _ := Build(bare, BuildOptions{})
	if len(probs) > 0 || !cmp.Equal(got, want) {
		t.Fatalf("problems %v, tree (-want +got):\n%s", probs, cmp.Diff(want, got))
	}
	if on, _ := Build(bare, BuildOptions{AcceleratorDomains: true}); !cmp.Equal(on, want) {
		t.Fatalf("without NVLink domains the option changed the tree (-want +got):\n%s", cmp.Diff(want, on))
	}
}

func TestBuildAcceleratorDomainsIsOrderIndependent(t *testing.T) {
	in := withNodes(twoLeafNVLink(), gpu("b4", "", "lb"), gpu("c1", "c1.2", "lc"), gpu("d1", "c4.1", "ld"),
		gpu("d2", "C4-1", "ld"), gpu("d3", "c4.1", "ld"))
	in.SwitchLinks = join(in.SwitchLinks, cables("spine2", "lc", "ld"), cables("core", "spine", "spine2"))
	want, wantProbs := Build(in, BuildOptions{AcceleratorDomains: true})
	if err := want.Validate(); err != nil || len(wantProbs) != 1 { // b4 stands alone; c1 makes c1.2 a 2 + 1 split, no home

		t.Fatalf("err %v, problems %v", err, wantProbs)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		r.Shuffle(len(in.Nodes), func(i, j int) { in.Nodes[i], in.Nodes[j] = in.Nodes[j], in.Nodes[i] })
		r.Shuffle(len(in.SwitchLinks), func(i, j int) {
			in.SwitchLinks[i], in.SwitchLinks[j] = in.SwitchLinks[j], in.SwitchLinks[i]
		})
		got, probs := Build(in, BuildOptions{AcceleratorDomains: true})
		if diff := cmp.Diff(want, got) + cmp.Diff(wantProbs, probs); diff != "" {
			t.Fatalf("a reordered input gave a different result (tree, then problems; -want +got):\n%s", diff)
		}
	}
}

func TestNameList(t *testing.T) {
	names := strings.Split("a b c d e f g h i j", " ")
	if got, want := nameList(names[:3]), "a, b, c"; got != want {
		t.Errorf("nameList = %q, want %q", got, want)
	}
	if got, want := nameList(names), "a, b, c, d, e, f, g, h and 2 more"; got != want {
		t.Errorf("nameList = %q, want %q", got, want)
	}
}
