package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ib"
)

// ReportGUIDs keeps node and system image GUIDs; one that two nodes report names neither.
func TestReportedGUIDs(t *testing.T) {
	report := func(node string, guids ...string) *v1alpha1.NodeFabricReport {
		r := &v1alpha1.NodeFabricReport{}
		r.Name = node
		for i := 0; i+1 < len(guids); i += 2 {
			r.Spec.RDMADevices = append(r.Spec.RDMADevices, v1alpha1.RDMADevice{NodeGUID: guids[i], SystemImageGUID: guids[i+1]})
		}
		return r
	}
	got := ReportGUIDs([]*v1alpha1.NodeFabricReport{
		report("dgx-01", "0xa088c20300f10001", "0xa088c20300f100ff"),
		report("dgx-02", "0xa088c20300f10002", "0xa088c20300f100ff", "not-a-guid", ""),
	})
	want := map[ib.GUID]string{"a088c20300f10001": "dgx-01", "a088c20300f10002": "dgx-02"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReportGUIDs (-want +got):\n%s", diff)
	}
}
