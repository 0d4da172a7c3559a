package pipeline

import (
	"strings"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/topology"
)

// SourceReports names evidence that came from the agents' NodeFabricReports.
const SourceReports = "reports"

// EvidenceFromReport turns one node's report into topology evidence: every neighbour becomes a link to the
// switch it names, identified by topology.SwitchID. The evidence is SelfReported: the switch names it gives
// rank below a fabric-wide source's and count only when most reports of the switch agree.
//
// It takes no more from one report than the CRD lets a report hold (v1alpha1's limits), also from a report the
// schema did not bound (stored before a limit, or under a CRD edited by hand): the first MaxNeighbors
// neighbours, none whose chassis ID is longer than LLDP allows (cutting it could make it another switch's), and
// switch names and port IDs cut to that length.
func EvidenceFromReport(r *v1alpha1.NodeFabricReport) topology.NodeEvidence {
	e := topology.NodeEvidence{Node: r.Name, Source: SourceReports, SelfReported: true,
		NVLinkDomain: r.Spec.NVLinkDomain, NVLinkSubDomain: r.Spec.NVLinkSubDomain}
	neighbors := r.Spec.Neighbors[:min(len(r.Spec.Neighbors), v1alpha1.MaxNeighbors)]
	if len(neighbors) > 0 {
		e.Links = make([]topology.SwitchLink, 0, len(neighbors))
	}
	for _, n := range neighbors {
		if len(n.ChassisID) > v1alpha1.MaxSwitchIDLength {
			continue
		}
		e.Links = append(e.Links, topology.SwitchLink{
			SwitchID:   topology.SwitchID(n.ChassisIDSubtype, n.ChassisID),
			SwitchName: clip(n.SystemName, v1alpha1.MaxSwitchIDLength),
			Port:       clip(n.PortID, v1alpha1.MaxSwitchIDLength),
			Storage:    n.Class == v1alpha1.PortClassStorage,
		})
	}
	if len(e.Links) == 0 {
		e.Links = nil // as without the room made above: every neighbour left out
	}
	return e
}

// clip cuts s to at most n bytes, never within a UTF-8 character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
