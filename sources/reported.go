package sources

import (
	"sync/atomic"

	"github.com/fabricmap/fabricmap/ib"
)

// ReportedGUIDs maps the node and system image GUIDs of the RDMA devices that NodeFabricReports list to their
// nodes, so that the capture and UFM can name a host whose adapters carry no usable description (the adapter's
// default, a generic name) after the node that reports them (ibfabric.Options.ReportedNode,
// ufm.Options.ReportedNode). The aggregator sets it from the reports at every rebuild; the polls read it from
// their own goroutines. The zero value knows no GUID.
type ReportedGUIDs struct {
	m atomic.Pointer[map[ib.GUID]string]
}

// Set replaces the map.
func (r *ReportedGUIDs) Set(m map[ib.GUID]string) { r.m.Store(&m) }

// Node names the node that reports an RDMA device with GUID g; "" when none does.
func (r *ReportedGUIDs) Node(g ib.GUID) string {
	if m := r.m.Load(); m != nil {
		return (*m)[g]
	}
	return ""
}
