package topology

import (
	"reflect"
	"testing"
)

func TestMerge(t *testing.T) {
	from := func(src string, e NodeEvidence) NodeEvidence { e.Source = src; return e }
	reports := Input{Nodes: []NodeEvidence{
		from("reports", host("a", "leaf1")),
		from("reports", host("b", "leaf1")),
		from("reports", NodeEvidence{Node: "c"}),
		from("reports", host("e", "mac:02:00:00:00:00:01")),
	}}
	capture := Input{
		Nodes: []NodeEvidence{
			from("ib", host("a", "leaf1", "leaf2")),        // agrees (shares leaf1)
			from("ib", host("b", "leaf9")),                 // disagrees
			from("ib", host("c", "leaf3")),                 // the report knew no switch: no disagreement
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
	if want := []string{"a/reports", "b/reports", "c/reports", "e/reports", "d/ib"}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("nodes = %v, want %v", nodes, want)
	}
	if len(got.SwitchLinks) != 2 {
		t.Errorf("switch links = %v", got.SwitchLinks)
	}
	if want := []Conflict{{Node: "b", Kept: "reports", Dropped: "ib"}}; !reflect.DeepEqual(conflicts, want) {
		t.Errorf("conflicts = %v, want %v", conflicts, want)
	}
}
