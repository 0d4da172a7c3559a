package ufm

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
)

// Systems that are neither switches nor hosts are listed once each, by type and GUID, with the number of
// their cables left out (a cable listed from both ends once), first among the items skipped, and as host
// notes, which the aggregator turns into Events; their cables add no line of their own.
func TestEvidenceListsSystemsLeftOut(t *testing.T) {
	const (
		leaf   = "248a070300f88fe0"
		gw     = "0002c90300e4a000" // a gateway's system GUID; its HCAs follow it
		router = "0002c90300e4b000"
		odd    = "0002c90300e4c000"
	)
	systems := []System{
		{SystemGUID: leaf, GUID: leaf, SystemName: "MF0;sw-1:MQM8700/U1", Type: "switch"},
		{SystemGUID: "946dae0300c10100", GUID: "946dae0300c10100", SystemName: "gpu-01", Type: "host"},
		{SystemGUID: router, GUID: router, SystemName: "ib-router-1", Type: "router", Ports: []string{router + "_1"}},
		{SystemGUID: gw, GUID: gw + "1", SystemName: "skyway-01", Type: "Gateway", Ports: []string{gw[:15] + "1_1", gw[:15] + "2_1"}},
		{SystemGUID: odd, GUID: odd, SystemName: "", Type: ""},
	}
	links := []Link{
		{SourceGUID: "946dae0300c10100", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "1"},
		{SourceGUID: gw[:15] + "1", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "20"},
		{SourceGUID: leaf, SourcePort: "20", DestinationGUID: gw[:15] + "1", DestinationPort: "1"}, // the same cable
		{SourceGUID: gw[:15] + "2", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "21"},
		{SourceGUID: router, SourcePort: "1", DestinationGUID: leaf, DestinationPort: "30"},
		{SourceGUID: "0002c90300e4d001", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "31"}, // of no system
	}
	tests := []struct {
		name    string
		systems []System
		leftOut []LeftOutSystem
		skipped []string
		notes   []ib.HostNote
	}{{
		name:    "no system left out",
		systems: systems[:2],
		skipped: []string{
			"link " + gw[:15] + "1_1:" + leaf + "_20: end " + gw[:15] + `1 ("") belongs to no system that resources/systems or resources/ports list`,
			"link " + leaf + "_20:" + gw[:15] + "1_1: end " + gw[:15] + `1 ("") belongs to no system that resources/systems or resources/ports list`,
			"link " + gw[:15] + "2_1:" + leaf + "_21: end " + gw[:15] + `2 ("") belongs to no system that resources/systems or resources/ports list`,
			"link " + router + "_1:" + leaf + "_30: end " + router + ` ("") belongs to no system that resources/systems or resources/ports list`,
			"link 0002c90300e4d001_1:" + leaf + `_31: end 0002c90300e4d001 ("") belongs to no system that resources/systems or resources/ports list`,
		},
	}, {
		name:    "a gateway, a router and a system of no type",
		systems: systems,
		leftOut: []LeftOutSystem{
			{SystemGUID: odd, Type: ""},
			{SystemGUID: gw, SystemName: "skyway-01", Type: "gateway", Links: 2},
			{SystemGUID: router, SystemName: "ib-router-1", Type: "router", Links: 1},
		},
		skipped: []string{
			`system of no type 0002c90300e4c000 (""): neither a switch nor a host; left out with no cable`,
			`gateway 0002c90300e4a000 ("skyway-01"): neither a switch nor a host; left out with its 2 cables`,
			`router 0002c90300e4b000 ("ib-router-1"): neither a switch nor a host; left out with its 1 cable`,
			"link 0002c90300e4d001_1:" + leaf + `_31: end 0002c90300e4d001 ("") belongs to no system that resources/systems or resources/ports list`,
		},
		notes: []ib.HostNote{
			{GUID: gw, Host: "skyway-01", Reason: `UFM lists it as a gateway (type "gateway": a bridge to another network), not a node to place`},
			{GUID: router, Host: "ib-router-1", Reason: `UFM lists it as an InfiniBand router (type "router"), not a node to place`},
			{GUID: odd, Reason: "UFM gives it no type: neither a switch nor a host"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(&Fabric{Systems: tc.systems, Links: links}, Options{})
			if len(in.Nodes) != 1 || in.Nodes[0].Node != "gpu-01" || len(in.Nodes[0].Links) != 1 {
				t.Errorf("nodes = %+v, want gpu-01 on sw-1", in.Nodes)
			}
			if diff := cmp.Diff(tc.leftOut, rep.LeftOut); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, rep.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, rep.Notes()); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeftOutSystemReason(t *testing.T) {
	for _, tc := range []struct {
		typ, want string
	}{
		{"gateway", `UFM lists it as a gateway (type "gateway": a bridge to another network), not a node to place`},
		{"router", `UFM lists it as an InfiniBand router (type "router"), not a node to place`},
		{"", "UFM gives it no type: neither a switch nor a host"},
		{"sharp", `UFM gives it type "sharp": neither a switch nor a host`},
	} {
		if got := (LeftOutSystem{Type: tc.typ}).Reason(); got != tc.want {
			t.Errorf("type %q: reason %q, want %q", tc.typ, got, tc.want)
		}
	}
}
