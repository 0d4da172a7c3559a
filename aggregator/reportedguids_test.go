package aggregator

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/internal/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A capture whose HCAs carry the adapter's default description: the aggregator names each after the node
// whose report lists its GUID, and the others after their GUID, never one fake node for all.
func TestCaptureHostsNamedAfterTheReportsGUIDs(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	file := filepath.Join(t.TempDir(), "fabric.txt")
	capture, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata/defaultdesc.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	reported := &sources.ReportedGUIDs{}
	c := ibfabric.NewCapture(file)
	rules := ib.DefaultHostRules()
	c.Options.Hosts, c.Options.ReportedNode = &rules, reported.Node
	r.Sources = []sources.Spec{{Source: c}}
	r.Config.ReportedGUIDs = reported

	// dgx-01's agent lists the first ConnectX-7 and, like the capture, sees it cabled to ib-leaf-01 port 1.
	// Without the reports' GUIDs the capture's copy of that host would be a second node, guid-a088…0001.
	rep := &v1alpha1.NodeFabricReport{}
	rep.Name = "dgx-01"
	rep.Spec.RDMADevices = []v1alpha1.RDMADevice{{Name: "mlx5_0", NodeGUID: "0xa088c20300f10001"}}
	rep.Spec.Neighbors = []v1alpha1.LinkNeighbor{{Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1",
		ChassisID: "0xB83FD20300B30011", ChassisIDSubtype: "guid", PortID: "1", SystemName: "ib-leaf-01"}}
	upsertReport(t, rep)
	reconcileOnce(t, r)

	var members []string
	for _, m := range hyperNodes(t) {
		members = append(members, m...)
	}
	for _, want := range []string{"dgx-01", "guid-a088c20300f10002"} {
		if !contains(members, want) {
			t.Errorf("HyperNode members %v lack %s", members, want)
		}
	}
	for _, never := range []string{"mt4129", "guid-a088c20300f10001", "localhost", "ufm-01"} {
		if contains(members, never) {
			t.Errorf("HyperNode members %v hold %s", members, never)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ReportGUIDs keeps node and system image GUIDs; one that two nodes report names neither.
func TestReportedGUIDs(t *testing.T) {
	report := func(node string, guids ...string) v1alpha1.NodeFabricReport {
		r := v1alpha1.NodeFabricReport{}
		r.Name = node
		for i := 0; i+1 < len(guids); i += 2 {
			r.Spec.RDMADevices = append(r.Spec.RDMADevices, v1alpha1.RDMADevice{NodeGUID: guids[i], SystemImageGUID: guids[i+1]})
		}
		return r
	}
	got := ReportGUIDs([]v1alpha1.NodeFabricReport{
		report("dgx-01", "0xa088c20300f10001", "0xa088c20300f100ff"),
		report("dgx-02", "0xa088c20300f10002", "0xa088c20300f100ff", "not-a-guid", ""),
	})
	want := map[ib.GUID]string{"a088c20300f10001": "dgx-01", "a088c20300f10002": "dgx-02"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReportGUIDs (-want +got):\n%s", diff)
	}
}
