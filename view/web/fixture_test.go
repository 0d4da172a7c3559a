package web

import (
	"fmt"
	"time"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

// fixture is a two-leaf fabric with one node out of the tree, one rejected piece of evidence, one expired
// report, and three more nodes of the cluster: one without a report, one whose agent went silent (its report
// dropped) and one whose report cannot be used. UFM's last poll failed; the capture is fine.
func fixture() State {
	leafA := []topology.SwitchLink{{SwitchID: "mac:02:00:00:00:00:0a", SwitchName: "sw-leaf-a"}}
	leafB := []topology.SwitchLink{{SwitchID: "mac:02:00:00:00:00:0b", SwitchName: "sw-leaf-b"}}
	t, problems := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "gpu-a1", Source: "reports", Links: leafA},
		{Node: "gpu-a2", Source: "reports", Links: leafA},
		{Node: "gpu-a3", Source: "reports", Links: leafA},
		{Node: "gpu-b1", Source: "reports", Links: leafB},
		{Node: "gpu-b2", Source: "reports", Links: leafB},
		{Node: "gpu-lonely"},
	}}, topology.BuildOptions{})
	conflicts := ConflictsFromProblems(problems)
	conflicts = append(conflicts, Conflict{Node: "gpu-b2", Source: "ufm", Reason: "ufm places the node behind another switch than reports; reports wins"})
	built := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	return State{Tree: t, Unplaced: t.Unplaced, Conflicts: conflicts, Updated: built,
		Nodes:   []string{"gpu-a1", "gpu-a2", "gpu-a3", "gpu-b1", "gpu-b2", "gpu-lonely", "gpu-noreport", "gpu-silent", "gpu-broken"},
		Reports: []string{"gpu-a1", "gpu-a2", "gpu-a3", "gpu-b1", "gpu-b2", "gpu-lonely", "gpu-silent", "gpu-broken"},
		Expired: []string{"gpu-a2"},
		Dropped: []string{"gpu-silent"},
		Sources: []SourceHealth{
			{Name: "ufm", Ready: true, Stale: true, Error: "source ufm: GET /ufmRest/resources/ports: 503 Service Unavailable", LastSuccess: built.Add(-time.Hour)},
			{Name: "capture", Ready: true, LastSuccess: built},
		},
		Findings: fixtureFindings(),
	}
}

// fixtureFindings are fabric health's findings of the fixture, not in severity order: a slow port on
// sw-leaf-a, a crossed rail on sw-leaf-b and a domain the expected topology lacks.
func fixtureFindings() []health.Finding {
	return []health.Finding{
		{Kind: health.KindDegradedLink, Severity: health.SeverityWarning, Node: "gpu-a3", Domain: "sw-leaf-a", Port: "mlx5_1/1",
			Switches: []string{"mac:02:00:00:00:00:0a"}, Message: "mlx5_1/1 trained at 200 Gb/s; the leaf's host links run at 400 Gb/s"},
		{Kind: health.KindDrift, Severity: health.SeverityInfo, Domain: "sw-leaf-b", Message: "domain sw-leaf-b is not in the expected topology"},
		{Kind: health.KindMiscabledRail, Severity: health.SeverityCritical, Node: "gpu-b1", Domain: "sw-leaf-b", Port: "mlx5_3/1",
			Switches: []string{"mac:02:00:00:00:00:0a", "mac:02:00:00:00:00:0b"}, Message: "rail 3 reaches sw-leaf-a, the leaf of rail 0"},
	}
}

// bigFabric is a generated fabric: hosts named gpu-00000… behind leaves of perLeaf hosts, leavesPerSpine leaves
// per spine, with every node of the cluster reporting.
func bigFabric(hosts, perLeaf, leavesPerSpine int) State {
	var in topology.Input
	var nodes []string
	for h := range hosts {
		leaf := h / perLeaf
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("gpu-%05d", h), Source: "reports",
			Links: []topology.SwitchLink{{SwitchID: fmt.Sprintf("mac:%d", leaf), SwitchName: fmt.Sprintf("leaf-%03d", leaf)}}})
		nodes = append(nodes, fmt.Sprintf("gpu-%05d", h))
	}
	for l := range (hosts + perLeaf - 1) / perLeaf {
		spine := fmt.Sprintf("mac:s%d", l/leavesPerSpine)
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: fmt.Sprintf("mac:%d", l), B: spine, Source: "capture"})
		in.SwitchNames = append(in.SwitchNames, topology.SwitchName{SwitchID: spine, Name: fmt.Sprintf("spine-%02d", l/leavesPerSpine)})
	}
	t, _ := topology.Build(in, topology.BuildOptions{})
	return State{Tree: t, Nodes: nodes, Reports: nodes, Updated: time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)}
}

// superPOD is a fat tree named as a SuperPOD's fabric is: hosts dgx-00000… behind rail leaves of 32,
// ib-su118-leaf-r1 … ib-su196-leaf-r1 (four a scalable unit), eight leaves under each spine ib-spine-00 ….
func superPOD(hosts int) *topology.Tree {
	var in topology.Input
	for h := range hosts {
		l := h / 32
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("dgx-%05d", h), Source: "ufm",
			Links: []topology.SwitchLink{{SwitchID: fmt.Sprintf("guid:%d", l), SwitchName: fmt.Sprintf("ib-su%d-leaf-r%d", 118+l/4, l%4+1)}}})
	}
	for l := range (hosts + 31) / 32 {
		spine := fmt.Sprintf("guid:s%d", l/8)
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: fmt.Sprintf("guid:%d", l), B: spine, Source: "ufm"})
		in.SwitchNames = append(in.SwitchNames, topology.SwitchName{SwitchID: spine, Name: fmt.Sprintf("ib-spine-%02d", l/8)})
	}
	t, _ := topology.Build(in, topology.BuildOptions{})
	return t
}
