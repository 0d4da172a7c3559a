package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMerge(t *testing.T) {
	from := func(src string, e NodeEvidence) NodeEvidence { e.Source = src; return e }
	reports := Input{Nodes: []NodeEvidence{
		from("reports", host("a", "leaf1")),
		from("reports", host("b", "leaf1")),
		from("reports", NodeEvidence{Node: "c", NVLinkDomain: "nvl-1", NVLinkSubDomain: "rack-1"}), // NVML only
		from("reports", host("e", "mac:02:00:00:00:00:01")),
	}}
	capture := Input{
		Nodes: []NodeEvidence{
			from("ib", host("a", "leaf1", "leaf2")),        // agrees (shares leaf1)
			from("ib", host("b", "leaf9")),                 // disagrees
			from("ib", host("c", "leaf3")),                 // the report knew no switch: the capture places c
			from("ib", host("d", "leaf3")),                 // only the capture knows d
			from("ib", host("e", "guid:0000000000000001")), // Ethernet seen by one, InfiniBand by the other: nothing to compare
		},
		SwitchLinks: cables("spine", "leaf1", "leaf3"),
	}
	got, conflicts := Merge(reports, capture)
	var nodes []string
	for _, n := range got.Nodes {
		nodes = append(nodes, n.Node+"/"+n.Source)
	}
	if diff := cmp.Diff([]string{"a/reports", "b/reports", "c/ib", "e/reports", "d/ib"}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if c := got.Nodes[2]; c.NVLinkDomain != "nvl-1" || c.NVLinkSubDomain != "rack-1" || len(c.computeSwitches()) != 1 {
		t.Errorf("c = %+v, want the capture's leaf and the report's NVLink domain and sub-domain", c)
	}
	if len(got.SwitchLinks) != 2 {
		t.Errorf("switch links = %v", got.SwitchLinks)
	}
	if diff := cmp.Diff([]Conflict{{Node: "b", Kept: "reports", Dropped: "ib"}}, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	// The names of the capture's evidence left out stay, but for the node in conflict (b) and c's and d's, which
	// are used.
	wantNames := []SwitchName{{"leaf1", "leaf1", "ib"}, {"leaf2", "leaf2", "ib"},
		{"guid:0000000000000001", "guid:0000000000000001", "ib"}}
	if diff := cmp.Diff(wantNames, got.SwitchNames); diff != "" {
		t.Errorf("switch names (-want +got):\n%s", diff)
	}
}

// The names a node's own report gives are not carried when Merge leaves the report out: they are only used
// as the reports' (see Build), and a left-out report is not used.
func TestMergeKeepsNoNamesOfLeftOutReports(t *testing.T) {
	capture := Input{Nodes: []NodeEvidence{captured("a", "guid:1", "leaf1")}, SwitchNames: []SwitchName{{"guid:2", "leaf2", "ufm"}}}
	reports := Input{Nodes: []NodeEvidence{reported("a", "guid:1", "spoofed"), reported("b", "guid:1", "leaf1")}}
	got, _ := Merge(capture, reports)
	if diff := cmp.Diff([]SwitchName{{"guid:2", "leaf2", "ufm"}}, got.SwitchNames); diff != "" {
		t.Errorf("switch names (-want +got):\n%s", diff)
	}
}
