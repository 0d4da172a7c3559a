package health_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

// TestAssessLostUplinks: a node that lost every uplink is a critical finding in the domain of the leaf it lost,
// whose message names the node, the leaf and since when (in UTC), and the node is judged down, whatever else
// is said of it.
func TestAssessLostUplinks(t *testing.T) {
	since := time.Date(2026, 11, 26, 10, 4, 5, 0, time.FixedZone("CET", 3600))
	erring := railHost("h3", leafR0, leafR1)
	erring.Ports[0] = with(erring.Ports[0], condition("Degraded", "SymbolErrors", ""))
	for _, tc := range []struct {
		name  string
		nodes []health.NodePorts
		lost  []health.LostUplink
		want  health.Assessment
	}{{
		name:  "no node lost its uplinks",
		nodes: railUnit(nil),
	}, {
		name:  "two nodes of one leaf",
		nodes: railUnit(nil),
		lost:  []health.LostUplink{{Node: "h9", Leaf: "sw-l1", Since: since}, {Node: "h8", Leaf: "sw-l1", Since: since.Add(time.Minute)}},
		want: health.Assessment{
			Findings: []health.Finding{
				{Kind: health.KindUplinkLost, Severity: health.SeverityCritical, Node: "h8", Domain: "sw-l1",
					Message: "node h8 lost its leaf sw-l1: no uplink evidence since 2026-11-26T09:05:05Z"},
				{Kind: health.KindUplinkLost, Severity: health.SeverityCritical, Node: "h9", Domain: "sw-l1",
					Message: "node h9 lost its leaf sw-l1: no uplink evidence since 2026-11-26T09:04:05Z"},
			},
			DegradedNodes: map[string]string{"h8": "down", "h9": "down"},
		},
	}, {
		name:  "a node judged degraded before is down once its uplinks are lost",
		nodes: railUnit(map[string]health.NodePorts{"h3": erring}),
		lost:  []health.LostUplink{{Node: "h3", Leaf: "sw-r0-rails", Since: since}},
		want: health.Assessment{
			Findings: []health.Finding{
				{Kind: health.KindUplinkLost, Severity: health.SeverityCritical, Node: "h3", Domain: "sw-r0-rails",
					Message: "node h3 lost its leaf sw-r0-rails: no uplink evidence since 2026-11-26T09:04:05Z"},
				{Kind: health.KindErroringLink, Severity: health.SeverityWarning, Node: "h3", Domain: "sw-r0-rails",
					Switches: []string{leafR0}, Port: "mlx5_0/1",
					Message: "h3: port mlx5_0/1 (leaf domain sw-r0-rails) is degraded (SymbolErrors)"},
			},
			DegradedNodes: map[string]string{"h3": "down"},
		},
	}, {
		name:  "a leaf name with control characters is written out",
		nodes: railUnit(nil),
		lost:  []health.LostUplink{{Node: "h9", Leaf: "sw-\x1b[31m", Since: since}},
		want: health.Assessment{
			Findings: []health.Finding{{Kind: health.KindUplinkLost, Severity: health.SeverityCritical, Node: "h9", Domain: "sw-\x1b[31m",
				Message: `node h9 lost its leaf sw-\x1b[31m: no uplink evidence since 2026-11-26T09:04:05Z`}},
			DegradedNodes: map[string]string{"h9": "down"},
		},
	}, {
		name:  "an entry without a node is ignored",
		nodes: railUnit(nil),
		lost:  []health.LostUplink{{Leaf: "sw-l1", Since: since}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := health.Assess(health.Input{Tree: treeOf(t, tc.nodes, nil), Nodes: tc.nodes, LostUplinks: tc.lost})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodeLeaves: each node is named with its leaf: the leaf domain above an accelerator domain, the domain that
// holds it in a tree without tier names; a nil tree places nothing.
func TestNodeLeaves(t *testing.T) {
	tree := &topology.Tree{Domains: map[string]*topology.Domain{
		"fabric": {Name: "fabric", Tier: 3, TierName: topology.TierNameRoot, Children: []string{"sw-a", "sw-b"}},
		"sw-a":   {Name: "sw-a", Tier: 2, TierName: topology.TierNameLeaf, Parent: "fabric", Children: []string{"nvl-1"}, Switches: []string{"mac:a"}},
		"nvl-1":  {Name: "nvl-1", Tier: 1, TierName: topology.TierNameAccelerator, Parent: "sw-a", Nodes: []string{"n1", "n2"}},
		"sw-b":   {Name: "sw-b", Tier: 2, TierName: topology.TierNameLeaf, Parent: "fabric", Nodes: []string{"n3"}, Switches: []string{"mac:b"}},
	}}
	for _, tc := range []struct {
		name string
		tree *topology.Tree
		want map[string]string
	}{
		{"nil", nil, map[string]string{}},
		{"accelerator domains below a leaf", tree, map[string]string{"n1": "sw-a", "n2": "sw-a", "n3": "sw-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.NodeLeaves(tc.tree)); diff != "" {
				t.Errorf("NodeLeaves (-want +got):\n%s", diff)
			}
		})
	}
}
