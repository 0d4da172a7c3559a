package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// GB200 NVL72 fixtures: a compute tray is one node (4 GPUs), 18 trays make the NVLink domain of one
// NVL72; the domain is "<clusterUUID>.<cliqueId>" as the agent reports it, the sub-domain the chassis serial
// number NVML's platform info gives each tray of a rack.
const (
	nvl72A   = "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"
	nvl72B   = "1a2b3c4d-5e6f-4a8b-9c0d-e1f203142536.1"
	rackA1   = "1821724000123"
	rackA2   = "1821724000456"
	nvl72AHN = "nvl-7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081-1"
	nvl72BHN = "nvl-1a2b3c4d-5e6f-4a8b-9c0d-e1f203142536-1"
)

// trays returns count nodes "<prefix>-t01", … of NVLink domain nvl and sub-domain sub ("" for none), each
// cabled to the leaves.
func trays(prefix string, count int, nvl, sub string, leaves ...string) []NodeEvidence {
	out := make([]NodeEvidence, 0, count)
	for i := 1; i <= count; i++ {
		e := gpu(fmt.Sprintf("%s-t%02d", prefix, i), nvl, leaves...)
		e.NVLinkSubDomain = sub
		out = append(out, e)
	}
	return out
}

// trayNames returns the names trays gives, comma-separated.
func trayNames(prefix string, from, to int) string {
	var names []string
	for i := from; i <= to; i++ {
		names = append(names, fmt.Sprintf("%s-t%02d", prefix, i))
	}
	return strings.Join(names, ",")
}

// subName is the accelerator sub-domain Build names for sub of nvl.
func subName(nvl, sub string) string { return SafeName(acceleratorPrefix + nvl + "." + sub) }

// twoSpines is two spines below one core: spine-1 over leaf-1 and leaf-2, spine-2 over leaf-3.
func twoSpines() []SwitchEdge {
	return join(cables("spine-1", "leaf-1", "leaf-2"), cables("spine-2", "leaf-3"), cables("core", "spine-1", "spine-2"))
}

// TestBuildMultiRackNVLink covers NVLink domains larger than a leaf: the accelerator domain hangs below the
// lowest switch domain that holds all its nodes, with its sub-domains (racks) below it, and the switch tiers
// above keep their shape.
func TestBuildMultiRackNVLink(t *testing.T) {
	cpu := []NodeEvidence{host("cpu-1", "leaf-3"), host("cpu-2", "leaf-3")}
	tests := []struct {
		name      string
		nodes     [][]NodeEvidence
		links     []SwitchEdge
		want      []string
		wantProbs []string
	}{{
		name:  "NVL72 in one rack: 18 nodes behind one leaf, one sub-domain",
		nodes: [][]NodeEvidence{trays("gb-r1", 18, nvl72A, rackA1, "leaf-1"), cpu},
		links: twoSpines(),
		want: []string{
			"fabric(5)spine-1,spine-2", // the core, the single top domain, is the root
			"leaf-1(3)" + nvl72AHN,
			"leaf-3(3)cpu-1,cpu-2",
			nvl72AHN + "(2)" + subName(nvl72A, rackA1),
			subName(nvl72A, rackA1) + "(1)" + trayNames("gb-r1", 1, 18),
			"spine-1(4)leaf-1",
			"spine-2(4)leaf-3",
		},
	}, {
		name:  "one NVL72 over two racks behind two leaves (9 + 9): one part below each leaf, leaves and spines kept",
		nodes: [][]NodeEvidence{trays("gb-r1", 9, nvl72A, rackA1, "leaf-1"), trays("gb-r2", 9, nvl72A, rackA2, "leaf-2"), cpu},
		links: twoSpines(),
		want: []string{
			"fabric(5)spine-1,spine-2",
			"leaf-1(3)" + nvl72AHN + "-leaf-1",
			"leaf-2(3)" + nvl72AHN + "-leaf-2",
			"leaf-3(3)cpu-1,cpu-2",
			nvl72AHN + "-leaf-1(2)" + subName(nvl72A, rackA1),
			nvl72AHN + "-leaf-2(2)" + subName(nvl72A, rackA2),
			subName(nvl72A, rackA1) + "(1)" + trayNames("gb-r1", 1, 9),
			subName(nvl72A, rackA2) + "(1)" + trayNames("gb-r2", 1, 9),
			"spine-1(4)leaf-1,leaf-2",
			"spine-2(4)leaf-3",
		},
	}, {
		name: "dual-rack irregular layout (7 + 5) beside a single-rack NVL72 on the first leaf",
		nodes: [][]NodeEvidence{trays("gb-r1", 7, nvl72A, rackA1, "leaf-1"), trays("gb-r2", 5, nvl72A, rackA2, "leaf-2"),
			trays("gb-r3", 18, nvl72B, "1821724000789", "leaf-1"), cpu},
		links: twoSpines(),
		want: []string{
			"fabric(5)spine-1,spine-2",
			"leaf-1(3)" + nvl72BHN + "," + nvl72AHN + "-leaf-1",
			"leaf-2(3)" + nvl72AHN + "-leaf-2",
			"leaf-3(3)cpu-1,cpu-2",
			nvl72BHN + "(2)" + subName(nvl72B, "1821724000789"),
			subName(nvl72B, "1821724000789") + "(1)" + trayNames("gb-r3", 1, 18),
			nvl72AHN + "-leaf-1(2)" + subName(nvl72A, rackA1),
			nvl72AHN + "-leaf-2(2)" + subName(nvl72A, rackA2),
			subName(nvl72A, rackA1) + "(1)" + trayNames("gb-r1", 1, 7),
			subName(nvl72A, rackA2) + "(1)" + trayNames("gb-r2", 1, 5),
			"spine-1(4)leaf-1,leaf-2",
			"spine-2(4)leaf-3",
		},
	}, {
		name:  "dual-rack layout (7 + 5) under two spines, the second part in a leaf with CPU nodes: the part there, each CPU node alone",
		nodes: [][]NodeEvidence{trays("gb-r1", 7, nvl72A, "", "leaf-1"), trays("gb-r2", 5, nvl72A, "", "leaf-3"), cpu},
		links: twoSpines(),
		want: []string{
			"fabric(4)spine-1,spine-2",
			"leaf-1(2)" + nvl72AHN + "-leaf-1",
			"leaf-3(2)cpu-1,cpu-2," + nvl72AHN + "-leaf-3",
			nvl72AHN + "-leaf-1(1)" + trayNames("gb-r1", 1, 7),
			nvl72AHN + "-leaf-3(1)" + trayNames("gb-r2", 1, 5),
			"cpu-1(1)cpu-1",
			"cpu-2(1)cpu-2",
			"spine-1(3)leaf-1",
			"spine-2(3)leaf-3",
		},
		wantProbs: []string{
			`node "cpu-1" (source test): has no NVLink domain, while 5 of the 7 nodes of its leaf domain "leaf-3" have one: it stands alone in accelerator domain "cpu-1"`,
			`node "cpu-2" (source test): has no NVLink domain, while 5 of the 7 nodes of its leaf domain "leaf-3" have one: it stands alone in accelerator domain "cpu-2"`,
		},
	}, {
		name:  "one leaf's part with sub-domains, the other's without: each part as its nodes allow",
		nodes: [][]NodeEvidence{trays("gb-r1", 9, nvl72A, rackA1, "leaf-1"), trays("gb-r2", 9, nvl72A, "", "leaf-2")},
		links: twoSpines(),
		want: []string{
			"fabric(4)leaf-1,leaf-2",
			"leaf-1(3)" + nvl72AHN + "-leaf-1",
			"leaf-2(3)" + nvl72AHN + "-leaf-2",
			nvl72AHN + "-leaf-1(2)" + subName(nvl72A, rackA1),
			nvl72AHN + "-leaf-2(2)" + trayNames("gb-r2", 1, 9),
			subName(nvl72A, rackA1) + "(1)" + trayNames("gb-r1", 1, 9),
		},
	}, {
		name:  "a rack of sub-domain-less trays beside a rack with sub-domains behind one leaf: the rack keeps its sub-domain, each other tray stands alone",
		nodes: [][]NodeEvidence{trays("gb-r1", 9, nvl72A, rackA1, "leaf-1"), trays("gb-r2", 9, nvl72A, "", "leaf-1")},
		links: twoSpines(),
		want: append([]string{
			"fabric(4)leaf-1",
			"leaf-1(3)" + nvl72AHN,
			nvl72AHN + "(2)" + trayNames("gb-r2", 1, 9) + "," + subName(nvl72A, rackA1),
			subName(nvl72A, rackA1) + "(1)" + trayNames("gb-r1", 1, 9),
		}, aloneOutline("gb-r2", 9)...),
		wantProbs: aloneSubProblems("gb-r2", 9),
	}, {
		name:  "a few nodes with sub-domains among many without add no tier",
		nodes: [][]NodeEvidence{trays("gb-r1", 2, nvl72A, rackA1, "leaf-1"), trays("gb-r2", 16, nvl72A, "", "leaf-1")},
		links: twoSpines(),
		want: []string{
			"fabric(3)leaf-1",
			"leaf-1(2)" + nvl72AHN,
			nvl72AHN + "(1)" + trayNames("gb-r1", 1, 2) + "," + trayNames("gb-r2", 1, 16),
		},
		wantProbs: []string{`node "gb-r1-t01" (source test): NVLink sub-domains are not used: 2 of the 18 nodes in accelerator domains give one (gb-r1-t01, gb-r1-t02), fewer than half`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in Input
			for _, n := range tc.nodes {
				in.Nodes = append(in.Nodes, n...)
			}
			in.SwitchLinks = tc.links
			tree, probs := Build(in, BuildOptions{AcceleratorDomains: true})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(tc.want)), tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			got := make([]string, len(probs))
			for i, p := range probs {
				got[i] = p.String()
			}
			if len(got) != len(tc.wantProbs) {
				t.Fatalf("problems = %q, want %d", got, len(tc.wantProbs))
			}
			for i, want := range tc.wantProbs {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want)
				}
			}
			checkSubDomains(t, tree)
		})
	}
}

// aloneOutline is the Outline lines of count trays "<prefix>-t01", … each alone in a sub-domain named after it.
func aloneOutline(prefix string, count int) []string {
	var out []string
	for _, n := range strings.Split(trayNames(prefix, 1, count), ",") {
		out = append(out, n+"(1)"+n)
	}
	return out
}

// aloneSubProblems is the problems of count trays "<prefix>-t01", … without a sub-domain beside as many with one.
func aloneSubProblems(prefix string, count int) []string {
	var out []string
	for _, n := range strings.Split(trayNames(prefix, 1, count), ",") {
		out = append(out, fmt.Sprintf(`node %q (source test): has no NVLink sub-domain, while %d of the %d nodes of NVLink domain %q in leaf domain "leaf-1" have one: it stands alone in accelerator sub-domain "%s"`,
			n, count, 2*count, nvl72A, n))
	}
	return out
}

// checkSubDomains checks what Outline does not show: a sub-domain records its NVLink domain and sub-domain (or,
// alone for a node without one, is named after it), sits at tier 1 below its accelerator domain, and accelerator
// domains sit just above sub-domains when there are any.
func checkSubDomains(t *testing.T, tree *Tree) {
	t.Helper()
	subs := false
	for _, d := range tree.Domains {
		if d.TierName == TierNameAcceleratorSubDomain {
			subs = true
			p := tree.Domains[d.Parent]
			alone := d.NVLinkSubDomain == "" && len(d.Nodes) == 1 && d.Name == SafeName(d.Nodes[0])
			if d.Tier != 1 || d.NVLinkSubDomain == "" && !alone || p == nil || p.TierName != TierNameAccelerator || p.NVLinkDomain != d.NVLinkDomain {
				t.Errorf("sub-domain %+v below %+v", d, p)
			}
		}
	}
	for _, d := range tree.Domains {
		if d.TierName == TierNameAccelerator && subs && d.Tier != 2 {
			t.Errorf("accelerator domain %q at tier %d beside sub-domains", d.Name, d.Tier)
		}
		if d.TierName != TierNameAccelerator && d.TierName != TierNameAcceleratorSubDomain && d.Tier <= 2 && subs {
			t.Errorf("switch domain %q at tier %d beside sub-domains", d.Name, d.Tier)
		}
	}
}

// TestBuildNVLinkSplits pins how an NVLink domain split across two leaves is named: the part of a leaf holding
// more than two thirds of its nodes (its home) keeps the domain's own name, the other is named after its leaf;
// without a home both are, and tied (KeepNames may give one a previous name). Every node stays in its leaf, in
// its part; a part of fewer than minNVLinkPart nodes beside the home is named in a Problem.
func TestBuildNVLinkSplits(t *testing.T) {
	if minNVLinkPart != 3 {
		t.Fatalf("minNVLinkPart = %d; the cases below are written for 3", minNVLinkPart)
	}
	tests := []struct {
		name       string
		home, away int
		want       []string // the accelerator domains, sorted
		wantTied   bool
		wantProbs  int
	}{
		{name: "16 + 1: the home keeps the name, the single node gets a part, suspect", home: 16, away: 1,
			want: []string{nvl72AHN, nvl72AHN + "-leaf-2"}, wantProbs: 1},
		{name: "16 + 2: the home keeps the name, both nodes suspect", home: 16, away: 2,
			want: []string{nvl72AHN, nvl72AHN + "-leaf-2"}, wantProbs: 2},
		{name: "15 + 3: the home keeps the name, the rack is a part", home: 15, away: 3,
			want: []string{nvl72AHN, nvl72AHN + "-leaf-2"}},
		{name: "9 + 9: no home, both parts named after their leaf", home: 9, away: 9,
			want: []string{nvl72AHN + "-leaf-1", nvl72AHN + "-leaf-2"}, wantTied: true},
		{name: "12 + 6: two thirds is no home", home: 12, away: 6,
			want: []string{nvl72AHN + "-leaf-1", nvl72AHN + "-leaf-2"}, wantTied: true},
		{name: "1 + 1: no home", home: 1, away: 1,
			want: []string{nvl72AHN + "-leaf-1", nvl72AHN + "-leaf-2"}, wantTied: true},
		{name: "2 + 1: no home", home: 2, away: 1,
			want: []string{nvl72AHN + "-leaf-1", nvl72AHN + "-leaf-2"}, wantTied: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{
				Nodes:       append(trays("gb-r1", tc.home, nvl72A, "", "leaf-1"), trays("gb-r2", tc.away, nvl72A, "", "leaf-2")...),
				SwitchLinks: cables("spine-1", "leaf-1", "leaf-2"),
			}
			tree, probs := Build(in, BuildOptions{AcceleratorDomains: true})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			for _, p := range probs {
				if !strings.Contains(p.Reason, "claims NVLink domain") || !strings.HasPrefix(p.Node, "gb-r2-") {
					t.Errorf("unexpected problem %s", p)
				}
			}
			if len(probs) != tc.wantProbs {
				t.Errorf("problems %v, want %d", probs, tc.wantProbs)
			}
			parts := acceleratorParts(tree, nvl72A)
			if diff := cmp.Diff(tc.want, parts); diff != "" {
				t.Errorf("accelerator domains (-want +got):\n%s", diff)
			}
			held := 0
			for _, p := range parts {
				d := tree.Domains[p]
				held += len(d.Nodes)
				tied := d.Vote != nil && d.Vote.Tied
				if !d.NVLinkPart || tied != tc.wantTied || tree.Domains[d.Parent].TierName != TierNameLeaf {
					t.Errorf("accelerator domain %q (part %v, tied %v) below %q", p, d.NVLinkPart, tied, d.Parent)
				}
			}
			if want := tc.home + tc.away; held != want {
				t.Errorf("accelerator domains hold %d nodes, want %d", held, want)
			}
		})
	}
}

// acceleratorParts returns the names of the accelerator domains that stand for NVLink domain nvl, sorted.
func acceleratorParts(t *Tree, nvl string) []string {
	var out []string
	for _, d := range t.Domains {
		if d.TierName == TierNameAccelerator && d.NVLinkDomain == nvl {
			out = append(out, d.Name)
		}
	}
	slices.Sort(out)
	return out
}
