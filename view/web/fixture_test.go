package web

import (
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

// fixture is a two-leaf fabric with one node out of the tree and one rejected piece of evidence.
func fixture() State {
	t, problems := topology.Build(topology.Input{Nodes: []topology.NodeEvidence{
		{Node: "gpu-a1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-a2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-a3", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "1", SwitchName: "sw-leaf-a"}}},
		{Node: "gpu-b1", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "2", SwitchName: "sw-leaf-b"}}},
		{Node: "gpu-b2", Source: "reports", Links: []topology.SwitchLink{{SwitchID: "2", SwitchName: "sw-leaf-b"}}},
		{Node: "gpu-lonely"},
	}}, topology.BuildOptions{})
	conflicts := ConflictsFromProblems(problems)
	conflicts = append(conflicts, Conflict{Node: "gpu-b2", Source: "ufm", Reason: "ufm places the node behind another switch than reports; reports wins"})
	return State{Tree: t, Unplaced: t.Unplaced, Conflicts: conflicts, Updated: time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)}
}
