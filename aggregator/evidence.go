package aggregator

import (
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/topology"
)

// SourceReports names evidence that came from the agents' NodeFabricReports.
const SourceReports = "reports"

// EvidenceFromReport turns one node's report into topology evidence: every neighbour becomes a link to the
// switch it names, identified by topology.SwitchID. The evidence is SelfReported: the switch names it gives
// rank below a fabric-wide source's and count only when most reports of the switch agree.
func EvidenceFromReport(r *v1alpha1.NodeFabricReport) topology.NodeEvidence {
	e := topology.NodeEvidence{Node: r.Name, Source: SourceReports, SelfReported: true,
		NVLinkDomain: r.Spec.NVLinkDomain, NVLinkSubDomain: r.Spec.NVLinkSubDomain}
	for _, n := range r.Spec.Neighbors {
		e.Links = append(e.Links, topology.SwitchLink{
			SwitchID:   topology.SwitchID(n.ChassisIDSubtype, n.ChassisID),
			SwitchName: n.SystemName,
			Port:       n.PortID,
			Storage:    n.Class == v1alpha1.PortClassStorage,
		})
	}
	return e
}
