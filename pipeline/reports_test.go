package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/fixture"
	"github.com/fabricmap/fabricmap/topology"
)

func TestEvidenceFromReport(t *testing.T) {
	r := fixture.LLDPReport("n1", "01")
	r.Spec.NVLinkDomain = "c.1"
	r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover,
		Interface: "mlx5_8/1", ChassisID: "0xabc", ChassisIDSubtype: "guid", Class: v1alpha1.PortClassStorage})
	e := EvidenceFromReport(r)
	if e.Node != "n1" || e.Source != SourceReports || !e.SelfReported || e.NVLinkDomain != "c.1" || len(e.Links) != 2 {
		t.Fatalf("evidence = %+v", e)
	}
	if l := e.Links[0]; l.SwitchID != "mac:02:00:00:00:00:01" || l.SwitchName != "sw-01" || l.Storage {
		t.Errorf("LLDP link = %+v", l)
	}
	if l := e.Links[1]; l.SwitchID != "guid:0000000000000abc" || !l.Storage {
		t.Errorf("storage link = %+v", l)
	}
}

// EvidenceFromReport takes no more from one report than the CRD lets it hold, also from a report the schema did
// not bound: the first MaxNeighbors neighbours, none with a chassis ID past LLDP's bound, names cut to it.
func TestEvidenceFromReportIsBounded(t *testing.T) {
	long := strings.Repeat("x", v1alpha1.MaxSwitchIDLength)
	neighbour := func(i int) v1alpha1.LinkNeighbor {
		return v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover, Interface: fmt.Sprintf("mlx5_%d/1", i),
			ChassisID: fmt.Sprintf("0x%016x", i), ChassisIDSubtype: "guid"}
	}
	overLong := neighbour(1)
	overLong.ChassisID = long + "0"
	named := neighbour(2)
	named.SystemName, named.PortID = long+"é", long+"1"
	for _, tc := range []struct {
		name      string
		neighbors []v1alpha1.LinkNeighbor
		// want is the number of links, and the name and port of the last one.
		want evidenceShape
	}{{
		name:      "neighbours past the limit are left out",
		neighbors: manyIBNeighbors(v1alpha1.MaxNeighbors+100, neighbour),
		want:      evidenceShape{Links: v1alpha1.MaxNeighbors, LastSwitch: fmt.Sprintf("guid:%016x", v1alpha1.MaxNeighbors-1)},
	}, {
		name:      "a chassis ID past LLDP's bound is left out, not cut into another switch's",
		neighbors: []v1alpha1.LinkNeighbor{neighbour(0), overLong},
		want:      evidenceShape{Links: 1, LastSwitch: "guid:0000000000000000"},
	}, {
		name:      "a switch name and port ID past the bound are cut to it",
		neighbors: []v1alpha1.LinkNeighbor{named},
		want:      evidenceShape{Links: 1, LastSwitch: "guid:0000000000000002", LastName: long, LastPort: long},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixture.LLDPReport("n1")
			r.Spec.Neighbors = tc.neighbors
			if diff := cmp.Diff(tc.want, shapeOf(EvidenceFromReport(r))); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

// evidenceShape is what TestEvidenceFromReportIsBounded checks of evidence.
type evidenceShape struct {
	Links                          int
	LastSwitch, LastName, LastPort string
}

func shapeOf(e topology.NodeEvidence) evidenceShape {
	s := evidenceShape{Links: len(e.Links)}
	if n := len(e.Links); n > 0 {
		l := e.Links[n-1]
		s.LastSwitch, s.LastName, s.LastPort = l.SwitchID, l.SwitchName, l.Port
	}
	return s
}

func manyIBNeighbors(n int, neighbour func(int) v1alpha1.LinkNeighbor) []v1alpha1.LinkNeighbor {
	out := make([]v1alpha1.LinkNeighbor, n)
	for i := range out {
		out[i] = neighbour(i)
	}
	return out
}
