package topologytest

import (
	"fmt"

	"github.com/fabricmap/fabricmap/topology"
)

// SpanNVLinkDomain is the NVLink domain ("<clusterUUID>.<cliqueId>") of SpanInput's GB200 trays.
const SpanNVLinkDomain = "5e0c7d1a-2f4b-4c8e-9a61-b7d3e2f14c09.3"

// SpanInput is a multi-rack NVLink fabric as GB200/GB300 sites build it: one NVLink domain of 48 compute
// trays in 6 racks, each rack's 8 trays behind its own leaf (leaf-1 … leaf-6), two leaves under each of 3
// spines (spine-1 … spine-3), the spines under one core; each tray reports its rack's chassis serial as its
// NVLink sub-domain ("rack-1" … "rack-6"). Beside it, 4 CPU nodes ("cpu-1" … "cpu-4") behind leaf-cpu, which
// is cabled straight to the core: a leaf directly under the root. Trays are named "gb-r<rack>-t<tray>".
func SpanInput() topology.Input {
	var in topology.Input
	for r := 1; r <= 6; r++ {
		leaf := fmt.Sprintf("leaf-%d", r)
		for i := 1; i <= 8; i++ {
			in.Nodes = append(in.Nodes, topology.NodeEvidence{
				Node: fmt.Sprintf("gb-r%d-t%d", r, i), Source: "reports",
				NVLinkDomain: SpanNVLinkDomain, NVLinkSubDomain: fmt.Sprintf("rack-%d", r),
				Links: []topology.SwitchLink{{SwitchID: leaf, SwitchName: leaf}},
			})
		}
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: leaf, B: fmt.Sprintf("spine-%d", (r+1)/2), Source: "test"})
	}
	for s := 1; s <= 3; s++ {
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: fmt.Sprintf("spine-%d", s), B: "core", Source: "test"})
	}
	for i := 1; i <= 4; i++ {
		in.Nodes = append(in.Nodes, topology.NodeEvidence{Node: fmt.Sprintf("cpu-%d", i), Source: "reports",
			Links: []topology.SwitchLink{{SwitchID: "leaf-cpu", SwitchName: "leaf-cpu"}}})
	}
	in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: "leaf-cpu", B: "core", Source: "test"})
	return in
}
