package pipeline

import (
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ib"
)

// ReportGUIDs maps the node and system image GUIDs of the reports' RDMA devices to the reports' nodes, for
// the capture and UFM sources (sources.ReportedGUIDs). A GUID two nodes report names neither: it proves
// nothing about which host it is. GUIDs that do not parse are skipped (the CRD bounds them; the agent writes
// them as 0x and 16 hex digits).
func ReportGUIDs(reports []*v1alpha1.NodeFabricReport) map[ib.GUID]string {
	m := map[ib.GUID]string{}
	ambiguous := map[ib.GUID]bool{}
	for i := range reports {
		node := reports[i].Name
		for _, d := range reports[i].Spec.RDMADevices {
			for _, s := range []string{d.NodeGUID, d.SystemImageGUID} {
				g, err := ib.ParseGUID(s)
				if s == "" || err != nil || ambiguous[g] {
					continue
				}
				if other, ok := m[g]; ok && other != node {
					delete(m, g)
					ambiguous[g] = true
					continue
				}
				m[g] = node
			}
		}
	}
	return m
}
