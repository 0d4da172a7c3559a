package health_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

func TestAssessRails(t *testing.T) {
	unknownRails := railUnit(nil)
	for i := range unknownRails {
		for j := range unknownRails[i].Ports {
			unknownRails[i].Ports[j].Rail = -1
		}
	}
	unknownRails[1] = railHost("h2", leafR1, leafR0)
	unknownRails[1].Ports[0].Rail, unknownRails[1].Ports[1].Rail = -1, -1
	for _, tc := range []struct {
		name  string
		nodes []health.NodePorts
		want  health.Assessment
	}{{
		name:  "two crossed cables of one host are named by the host and both leaves",
		nodes: railUnit(map[string]health.NodePorts{"h2": railHost("h2", leafR1, leafR0)}),
		want: health.Assessment{
			Findings: []health.Finding{{
				Kind: health.KindMiscabledRail, Severity: health.SeverityCritical, Node: "h2", Domain: "sw-r0-rails",
				Switches: []string{leafR1, leafR0}, Port: "mlx5_0/1",
				Message: "h2: the rail-0 HCA mlx5_0/1 is cabled to leaf sw:r1, which serves rail 1; rail 0's leaf in sw-r0-rails is sw:r0",
			}, {
				Kind: health.KindMiscabledRail, Severity: health.SeverityCritical, Node: "h2", Domain: "sw-r0-rails",
				Switches: []string{leafR0, leafR1}, Port: "mlx5_1/1",
				Message: "h2: the rail-1 HCA mlx5_1/1 is cabled to leaf sw:r0, which serves rail 0; rail 1's leaf in sw-r0-rails is sw:r1",
			}},
			DegradedNodes: map[string]string{"h2": "degraded"},
		},
	}, {
		name:  "a unit cabled right has no finding",
		nodes: railUnit(nil),
	}, {
		name:  "a unit whose rails are unknown is not judged",
		nodes: unknownRails,
	}, {
		name: "a leaf whose HCAs are split evenly between rails serves none, so its HCAs are not judged",
		nodes: []health.NodePorts{
			railHost("h1", leafR0, leafR1), railHost("h2", leafR1, leafR0),
		},
	}, {
		name: "a leaf only one node votes for serves no rail, so that node's HCAs there are not judged",
		nodes: append(railUnit(nil), health.NodePorts{Node: "h5", Ports: []health.Port{
			port("mlx5_0", 0, leafR0), port("mlx5_1", 1, "sw:r2"), port("mlx5_2", 2, "sw:r2"), port("mlx5_3", 2, "sw:r2"),
		}}),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := health.Assess(health.Input{Tree: treeOf(t, tc.nodes, nil), Nodes: tc.nodes})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAssessRailsBelowAccelerators judges a unit whose hosts sit in NVLink domains below its leaf domain.
func TestAssessRailsBelowAccelerators(t *testing.T) {
	nodes := railUnit(map[string]health.NodePorts{"h4": railHost("h4", leafR1, leafR0)})
	nvlink := map[string]string{"h1": "clique.1", "h2": "clique.1", "h3": "clique.2", "h4": "clique.2"}
	tree := treeWithNVLink(t, nodes, nil, nvlink)
	if tree.Domains["sw-r0-rails"] == nil || tree.Domains["sw-r0-rails"].Tier != 2 {
		t.Fatalf("the test tree has no rail unit above accelerator domains: %v", tree.Outline())
	}
	got := health.Assess(health.Input{Tree: tree, Nodes: nodes})
	var crossed []string
	for _, f := range got.Findings {
		crossed = append(crossed, string(f.Kind)+" "+f.Node+" "+f.Port+" "+f.Domain)
	}
	want := []string{"miscabled-rail h4 mlx5_0/1 sw-r0-rails", "miscabled-rail h4 mlx5_1/1 sw-r0-rails"}
	if diff := cmp.Diff(want, crossed); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestAssessIgnoresOrder gives the same input in reverse order: the assessment is the same.
func TestAssessIgnoresOrder(t *testing.T) {
	nodes := railUnit(map[string]health.NodePorts{
		"h2": railHost("h2", leafR1, leafR0),
		"h3": {Node: "h3", Ports: []health.Port{
			with(port("mlx5_0", 0, leafR0), rate(rate200), condition("Degraded", "SlowerThanCapable", "capable of 400")),
			with(port("mlx5_1", 1, leafR1), condition("Degraded", "SymbolErrors", "")),
			with(port("mlx5_4", -1, storageLeaf), storage, condition("Down", "PortDown", "")),
		}},
	})
	links := []health.Link{
		{From: leafR0, To: spine1, RateGbps: 400}, {From: leafR1, To: spine1, RateGbps: 200}, {From: leafR0, To: spine2, RateGbps: 400},
		{From: leafR1, To: spine2, RateGbps: 400, Width: "4X"}, {From: spine2, To: leafR1, RateGbps: 400, Width: "2X"},
	}
	tree := treeOf(t, nodes, links)
	want := health.Assess(health.Input{Tree: tree, Nodes: nodes, SwitchLinks: links, Expected: treeOf(t, railUnit(nil), nil)})
	if len(want.Findings) != 7 { // 2 crossed rails, 2 slow switch links, 3 ports of h3 (one finding each)
		t.Fatalf("the input should give 7 findings, got %v", want.Findings)
	}
	reversed := func(nodes []health.NodePorts) []health.NodePorts {
		out := slices.Clone(nodes)
		slices.Reverse(out)
		for i := range out {
			out[i].Ports = slices.Clone(out[i].Ports)
			slices.Reverse(out[i].Ports)
		}
		return out
	}
	rlinks := slices.Clone(links)
	slices.Reverse(rlinks)
	for range 5 { // map order varies from run to run
		got := health.Assess(health.Input{Tree: tree, Nodes: reversed(nodes), SwitchLinks: rlinks, Expected: treeOf(t, railUnit(nil), nil)})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Assess of the input reversed (-in order +reversed):\n%s", diff)
		}
	}
}

func TestAssessHostSpeeds(t *testing.T) {
	single := func(node, sw string, r int32) health.NodePorts {
		return health.NodePorts{Node: node, Ports: []health.Port{
			with(port("mlx5_0", 0, sw), rate(r)),
			with(port("mlx5_4", -1, storageLeaf), storage, rate(200)),
		}}
	}
	for _, tc := range []struct {
		name  string
		nodes []health.NodePorts
		want  health.Assessment
	}{{
		name: "a port at 200 Gb/s and one 2X wide among 400 Gb/s 4X peers",
		nodes: railUnit(map[string]health.NodePorts{
			"h3": {Node: "h3", Ports: []health.Port{port("mlx5_0", 0, leafR0), with(port("mlx5_1", 1, leafR1), rate(rate200))}},
			"h4": {Node: "h4", Ports: []health.Port{with(port("mlx5_0", 0, leafR0), width("2x"), rate(rate200)), port("mlx5_1", 1, leafR1)}},
		}),
		want: health.Assessment{
			Findings: []health.Finding{{
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "h3", Domain: "sw-r0-rails",
				Switches: []string{leafR1}, Port: "mlx5_1/1",
				Message: "h3: port mlx5_1/1 (leaf domain sw-r0-rails) runs at 200 Gb/s where the tier's links run at 400 Gb/s",
			}, {
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "h4", Domain: "sw-r0-rails",
				Switches: []string{leafR0}, Port: "mlx5_0/1",
				Message: "h4: port mlx5_0/1 (leaf domain sw-r0-rails) runs at 200 Gb/s, 2X where the tier's links run at 400 Gb/s, 4X",
			}},
			DegradedNodes: map[string]string{"h3": "degraded", "h4": "degraded"},
		},
	}, {
		name: "a leaf of another generation keeps its own mode; a lone port and storage ports take the fabric's",
		nodes: []health.NodePorts{
			single("h1", leaf1, 400), single("h2", leaf1, 400), single("h3", leaf1, 400),
			single("h4", leaf2, 200), single("h5", leaf2, 200),
			{Node: "h6", Ports: []health.Port{
				with(port("mlx5_0", 0, "sw:l3"), rate(100)),
				with(port("mlx5_4", -1, storageLeaf), storage, rate(100)),
			}},
		},
		want: health.Assessment{
			Findings: []health.Finding{{
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "h6", Domain: "sw-l3",
				Switches: []string{"sw:l3"}, Port: "mlx5_0/1",
				Message: "h6: port mlx5_0/1 (leaf domain sw-l3) runs at 100 Gb/s where the tier's links run at 400 Gb/s",
			}, {
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "h6", Domain: "sw-l3",
				Switches: []string{storageLeaf}, Port: "mlx5_4/1",
				Message: "h6: storage port mlx5_4/1 runs at 100 Gb/s where the tier's links run at 200 Gb/s",
			}},
			DegradedNodes: map[string]string{"h6": "degraded"},
		},
	}, {
		name: "a slow storage port alone never makes its node degraded",
		nodes: []health.NodePorts{
			single("h1", leaf1, 400), single("h2", leaf1, 400),
			{Node: "h3", Ports: []health.Port{port("mlx5_0", 0, leaf1), with(port("mlx5_4", -1, storageLeaf), storage, rate(100))}},
		},
		want: health.Assessment{Findings: []health.Finding{{
			Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "h3", Domain: "sw-l1",
			Switches: []string{storageLeaf}, Port: "mlx5_4/1",
			Message: "h3: storage port mlx5_4/1 runs at 100 Gb/s where the tier's links run at 200 Gb/s",
		}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := health.Assess(health.Input{Tree: treeOf(t, tc.nodes, nil), Nodes: tc.nodes})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessSwitchLinks(t *testing.T) {
	nodes := []health.NodePorts{
		{Node: "h1", Ports: []health.Port{port("mlx5_0", 0, leaf1)}},
		{Node: "h2", Ports: []health.Port{port("mlx5_0", 0, leaf1)}},
		{Node: "h3", Ports: []health.Port{port("mlx5_0", 0, leaf2)}},
		{Node: "h4", Ports: []health.Port{port("mlx5_0", 0, leaf2)}},
	}
	link := func(from, to string, r int32) health.Link {
		return health.Link{From: from, To: to, RateGbps: r, Width: "4X", Source: "ibnetdiscover"}
	}
	for _, tc := range []struct {
		name  string
		links []health.Link
		want  health.Assessment
	}{{
		name: "a link at half speed, and two parallel cables at half speed, are degraded uplinks of their leaves",
		links: []health.Link{
			link(leaf1, spine1, 400), link(leaf1, spine1, 400), link(spine2, leaf1, 400), link(spine2, leaf1, 200),
			link(leaf2, spine1, 400), link(leaf2, spine1, 400), link(leaf2, spine2, 200), link(leaf2, spine2, 200),
		},
		want: health.Assessment{
			Findings: []health.Finding{{
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Domain: "sw-l2", Switches: []string{leaf2, spine2},
				Message: "2 cables between sw:l2 (sw-l2) and sw:s2 (fabric) run at 200 Gb/s where the tier's links run at 400 Gb/s (source ibnetdiscover)",
			}, {
				Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Domain: "sw-l1", Switches: []string{leaf1, spine2},
				Message: "the link between sw:l1 (sw-l1) and sw:s2 (fabric) runs at 200 Gb/s where the tier's links run at 400 Gb/s (source ibnetdiscover)",
			}},
			DegradedUplinks: map[string]int{"sw-l1": 1, "sw-l2": 2},
		},
	}, {
		name: "links of unknown speed are not judged",
		links: []health.Link{
			link(leaf1, spine1, 400), link(leaf1, spine2, 0), {From: leaf2, To: spine1}, link(leaf2, spine2, 400),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := health.Assess(health.Input{Tree: treeOf(t, nodes, tc.links), Nodes: nodes, SwitchLinks: tc.links})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessConditions(t *testing.T) {
	nodes := []health.NodePorts{{Node: "c1", Ports: []health.Port{
		with(port("mlx5_0", 0, leaf1), rate(2), width("1X"), condition("Down", "PortDown", "")),
		with(port("mlx5_1", 1, leaf1), condition("Degraded", "LinkDowned", "link downed 3 times in 60s")),
	}}, {Node: "c2", Ports: []health.Port{
		with(port("mlx5_0", 0, leaf1), condition("Degraded", "Flapping", "")),
		with(port("mlx5_1", 1, leaf1), condition("Degraded", "SymbolErrors", "1200 symbol errors in 30s")),
		with(port("mlx5_2", 2, leaf1), rate(rate200), condition("Degraded", "SlowerThanCapable", "trained 200 Gb/s, capable of 400 Gb/s")),
		port("mlx5_3", 3, leaf1),
	}}, {Node: "c3", Ports: []health.Port{
		port("mlx5_0", 0, leaf1),
		with(port("mlx5_4", -1, storageLeaf), storage, condition("Down", "PortDown", "")),
		with(port("mlx5_5", -1, storageLeaf), storage, condition("Degraded", "ReceiveErrors", "")),
		with(port("mlx5_6", -1, storageLeaf), storage, condition("", "", "")),
	}}}
	want := health.Assessment{
		Findings: []health.Finding{{
			Kind: health.KindLinkDown, Severity: health.SeverityCritical, Node: "c1", Domain: "sw-l1", Switches: []string{leaf1},
			Port: "mlx5_0/1", Message: "c1: port mlx5_0/1 (leaf domain sw-l1) is down (PortDown)",
		}, {
			Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "c2", Domain: "sw-l1", Switches: []string{leaf1},
			Port: "mlx5_2/1",
			Message: "c2: port mlx5_2/1 (leaf domain sw-l1) is degraded (SlowerThanCapable: trained 200 Gb/s, capable of 400 Gb/s); " +
				"c2: port mlx5_2/1 (leaf domain sw-l1) runs at 200 Gb/s where the tier's links run at 400 Gb/s",
		}, {
			Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "c2", Domain: "sw-l1", Switches: []string{leaf1},
			Port: "mlx5_1/1", Message: "c2: port mlx5_1/1 (leaf domain sw-l1) is degraded (SymbolErrors: 1200 symbol errors in 30s)",
		}, {
			Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "c3", Domain: "sw-l1", Switches: []string{storageLeaf},
			Port: "mlx5_5/1", Message: "c3: storage port mlx5_5/1 is degraded (ReceiveErrors)",
		}, {
			Kind: health.KindFlappingLink, Severity: health.SeverityWarning, Node: "c1", Domain: "sw-l1", Switches: []string{leaf1},
			Port: "mlx5_1/1", Message: "c1: port mlx5_1/1 (leaf domain sw-l1) is degraded (LinkDowned: link downed 3 times in 60s)",
		}, {
			Kind: health.KindFlappingLink, Severity: health.SeverityWarning, Node: "c2", Domain: "sw-l1", Switches: []string{leaf1},
			Port: "mlx5_0/1", Message: "c2: port mlx5_0/1 (leaf domain sw-l1) is degraded (Flapping)",
		}, {
			Kind: health.KindLinkDown, Severity: health.SeverityWarning, Node: "c3", Domain: "sw-l1", Switches: []string{storageLeaf},
			Port: "mlx5_4/1", Message: "c3: storage port mlx5_4/1 is down (PortDown)",
		}},
		DegradedNodes: map[string]string{"c1": "down", "c2": "degraded"},
	}
	got := health.Assess(health.Input{Tree: treeOf(t, nodes, nil), Nodes: nodes})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Assess (-want +got):\n%s", diff)
	}
}

func TestAssessDrift(t *testing.T) {
	on := func(node, sw string) health.NodePorts {
		return health.NodePorts{Node: node, Ports: []health.Port{port("mlx5_0", 0, sw)}}
	}
	spines := []health.Link{{From: leaf1, To: spine1}, {From: leaf1, To: spine2}, {From: leaf2, To: spine1}, {From: leaf2, To: spine2}}
	plan := []health.NodePorts{on("h1", leaf1), on("h2", leaf1), on("h3", leaf2), on("h4", leaf2)}
	for _, tc := range []struct {
		name        string
		plan, nodes []health.NodePorts
		planLinks   []health.Link
		links       []health.Link
		renamePlan  map[string]string
		want        health.Assessment
	}{{
		name:       "a moved host, a missing one and an extra one, against a plan whose leaves have other names",
		plan:       plan,
		planLinks:  spines,
		renamePlan: map[string]string{"sw-l1": "rack-a", "sw-l2": "rack-b"},
		nodes:      []health.NodePorts{on("h1", leaf1), on("h2", leaf2), on("h3", leaf2), on("h5", leaf2)},
		links:      spines,
		want: health.Assessment{Findings: []health.Finding{{
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h2", Domain: "sw-l2",
			Message: "h2 is in leaf domain sw-l2 where the plan has it in sw-l1 (the plan's rack-a)",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h4", Domain: "rack-b",
			Message: "h4 is in the plan (leaf domain rack-b) but not in the tree",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityInfo, Node: "h5", Domain: "sw-l2",
			Message: "h5 (leaf domain sw-l2) is not in the plan",
		}}},
	}, {
		name:  "a planned leaf gone with its hosts, and a new one",
		plan:  plan,
		nodes: []health.NodePorts{on("h1", leaf1), on("h2", leaf1), on("h7", "sw:l7"), {Node: "h3"}},
		want: health.Assessment{Findings: []health.Finding{{
			Kind: health.KindDrift, Severity: health.SeverityCritical, Domain: "sw-l2", Switches: []string{leaf2},
			Message: "leaf domain sw-l2 of the plan (2 nodes) is gone: no domain of the tree holds its nodes or switches",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h3", Domain: "sw-l2",
			Message: "h3 is in the plan (leaf domain sw-l2) but not in the tree: no evidence places it",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h4", Domain: "sw-l2",
			Message: "h4 is in the plan (leaf domain sw-l2) but not in the tree",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityInfo, Domain: "sw-l7", Switches: []string{"sw:l7"},
			Message: "leaf domain sw-l7 (1 node) is not in the plan",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityInfo, Node: "h7", Domain: "sw-l7",
			Message: "h7 (leaf domain sw-l7) is not in the plan",
		}}},
	}, {
		name:  "two planned leaves cabled into one",
		plan:  plan,
		nodes: []health.NodePorts{on("h1", leaf1), on("h2", leaf1), on("h3", leaf1), on("h4", leaf1)},
		want: health.Assessment{Findings: []health.Finding{{
			Kind: health.KindDrift, Severity: health.SeverityCritical, Domain: "sw-l2", Switches: []string{leaf2},
			Message: "leaf domain sw-l2 of the plan (2 nodes) is gone: its nodes or switches are in sw-l1, which matches the plan's sw-l1",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h3", Domain: "sw-l1",
			Message: "h3 is in leaf domain sw-l1 where the plan has it in sw-l2, which is gone",
		}, {
			Kind: health.KindDrift, Severity: health.SeverityWarning, Node: "h4", Domain: "sw-l1",
			Message: "h4 is in leaf domain sw-l1 where the plan has it in sw-l2, which is gone",
		}}},
	}, {
		name: "a leaf below another spine than planned",
		plan: []health.NodePorts{on("n1", leaf1), on("n2", leaf2), on("n3", "sw:l3"), on("n4", "sw:l4"), on("n5", "sw:l5")},
		planLinks: []health.Link{{From: leaf1, To: spine1}, {From: leaf2, To: spine1}, {From: "sw:l3", To: spine1},
			{From: "sw:l4", To: spine2}, {From: "sw:l5", To: spine2}},
		nodes: []health.NodePorts{on("n1", leaf1), on("n2", leaf2), on("n3", "sw:l3"), on("n4", "sw:l4"), on("n5", "sw:l5")},
		links: []health.Link{{From: leaf1, To: spine1}, {From: leaf2, To: spine1}, {From: "sw:l3", To: spine2},
			{From: "sw:l4", To: spine2}, {From: "sw:l5", To: spine2}},
		want: health.Assessment{Findings: []health.Finding{{
			Kind: health.KindDrift, Severity: health.SeverityWarning, Domain: "sw-l3", Switches: []string{"sw:l3"},
			Message: "leaf domain sw-l3 sits below sw-s2 where the plan has it below sw-s1",
		}}},
	}, {
		name:  "the tree as planned has no drift",
		plan:  plan,
		nodes: plan,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			expected := treeOf(t, tc.plan, tc.planLinks)
			for from, to := range tc.renamePlan {
				rename(expected, from, to)
			}
			if err := expected.Validate(); err != nil {
				t.Fatalf("the plan is not a valid tree: %v", err)
			}
			in := health.Input{Tree: treeOf(t, tc.nodes, tc.links), Nodes: tc.nodes, Expected: expected}
			if diff := cmp.Diff(tc.want, health.Assess(in)); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessNothing(t *testing.T) {
	for _, in := range []health.Input{{}, {Tree: topology.NewTree()}, {Expected: topology.NewTree()}} {
		if diff := cmp.Diff(health.Assessment{}, health.Assess(in)); diff != "" {
			t.Errorf("Assess(%+v) (-want +got):\n%s", in, diff)
		}
	}
}

// A port down on most nodes that have it is left uncabled by design (e.g. the second port of every node's
// HCA): no finding, and no node made unavailable for it. A port down on one node among peers that have it up
// is a failure.
func TestAssessUnusedPorts(t *testing.T) {
	var nodes []health.NodePorts
	for _, n := range []string{"u1", "u2", "u3"} {
		np := health.NodePorts{Node: n, Ports: []health.Port{
			port("mlx5_0", 0, leaf1),
			port("mlx5_1", 1, leaf1),
			with(port("mlx5_5", 5, leaf1), condition("Down", "PortDown", "")),
		}}
		if n == "u1" {
			np.Ports[1] = with(port("mlx5_1", 1, leaf1), condition("Down", "PortDown", ""))
		}
		nodes = append(nodes, np)
	}
	got := health.Assess(health.Input{Tree: treeOf(t, nodes, nil), Nodes: nodes})
	var findings []string
	for _, f := range got.Findings {
		findings = append(findings, string(f.Kind)+" "+f.Node+" "+f.Port)
	}
	if diff := cmp.Diff([]string{"link-down u1 mlx5_1/1"}, findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"u1": "down"}, got.DegradedNodes); diff != "" {
		t.Errorf("degraded nodes (-want +got):\n%s", diff)
	}
}

// A port that runs slower than its tier only where the same port of its peers does too is built that way (a
// 200 Gb/s HCA on every node), not degraded; the same port slower on one node than on its peers is.
func TestAssessSlowPortsByDesign(t *testing.T) {
	var nodes []health.NodePorts
	for _, n := range []string{"s1", "s2", "s3"} {
		np := health.NodePorts{Node: n, Ports: []health.Port{
			port("mlx5_0", 0, leaf1),
			port("mlx5_1", 1, leaf1),
			port("mlx5_2", 2, leaf1),
			with(port("mlx5_3", 3, leaf1), rate(rate200)),
		}}
		if n == "s1" {
			np.Ports[1] = with(port("mlx5_1", 1, leaf1), rate(rate200))
		}
		nodes = append(nodes, np)
	}
	got := health.Assess(health.Input{Tree: treeOf(t, nodes, nil), Nodes: nodes})
	var findings []string
	for _, f := range got.Findings {
		findings = append(findings, string(f.Kind)+" "+f.Node+" "+f.Port)
	}
	if diff := cmp.Diff([]string{"degraded-link s1 mlx5_1/1"}, findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
