package ufm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/ib"
)

// Gateways UFM lists as hosts (a SwitchX gateway's CA, "MF0;<name>:MSX6710/GW", often under its switch's system
// GUID) are no nodes: they are listed with the gateways, by name and type, in the report and the notes; an
// ordinary host, a switch and a director's line card are not.
func TestEvidenceListsGatewaysListedAsHosts(t *testing.T) {
	const (
		sw      = "0002c90300b0c000" // the gateway's switch ASIC
		swSys   = "0002c90300b0c003" // the system GUID it shares with its gateway CA
		gwCA    = "0002c90300b0c001"
		leaf    = "248a070300f88fe0"
		gpu     = "946dae0300c10100"
		gwName  = "MF0;gw-1:MSX6710/GW"
		nameWhy = `its name is a gateway's node description (unit "GW")`
	)
	// The gateway CA listed before its switch, its port keyed by the switch's system GUID, as ports.json does.
	shared := &Fabric{
		Systems: []System{
			{SystemGUID: swSys, GUID: gwCA, SystemName: gwName, Type: "host"},
			{SystemGUID: swSys, GUID: sw, SystemName: "MF0;gw-1:MSX6710/U1", Type: "switch"},
			{SystemGUID: leaf, GUID: leaf, SystemName: "MF0;sw-1:MQM8700/U1", Type: "switch"},
			{SystemGUID: gpu, GUID: gpu, SystemName: "gpu-01", Type: "host"},
		},
		Ports: []Port{{Name: gwCA + "_1", GUID: gwCA, SystemID: swSys, NodeDescription: gwName}},
		Links: []Link{
			{SourceGUID: sw, SourcePort: "37", DestinationGUID: gwCA, DestinationPort: "1"},
			{SourceGUID: sw, SourcePort: "1", DestinationGUID: leaf, DestinationPort: "40"},
			{SourceGUID: gpu, SourcePort: "1", SourceNodeDescription: "gpu-01 mlx5_0", DestinationGUID: leaf, DestinationPort: "1"},
		},
	}
	byMode := &Fabric{
		Systems: []System{
			{SystemGUID: leaf, GUID: leaf, SystemName: "MF0;sw-1:MQM8700/U1", Type: "switch"},
			{SystemGUID: gpu, GUID: gpu, SystemName: "gpu-01", Type: "host"},
			{SystemGUID: "0002c90300e4a000", GUID: "0002c90300e4a000", SystemName: "skyway-01", Type: "host", ServerOperationMode: "Gateway"},
			{SystemGUID: "0002c90300e4b000", GUID: "0002c90300e4b000", SystemName: "ib-router-1", Type: "host", ServerOperationMode: "Router"},
			{SystemGUID: "0002c90300e4c000", GUID: "0002c90300e4c000", SystemName: "gw-lab", Type: "host"}, // a host's name
		},
		Links: []Link{
			{SourceGUID: gpu, SourcePort: "1", SourceNodeDescription: "gpu-01 mlx5_0", DestinationGUID: leaf, DestinationPort: "1"},
			{SourceGUID: "0002c90300e4a000", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "2"},
			{SourceGUID: "0002c90300e4b000", SourcePort: "1", DestinationGUID: leaf, DestinationPort: "3"},
			{SourceGUID: "0002c90300e4c000", SourcePort: "1", SourceNodeDescription: "MF0;gw-lab:MSX6710/GW", DestinationGUID: leaf, DestinationPort: "4"},
		},
	}
	tests := []struct {
		name    string
		fabric  *Fabric
		leftOut []LeftOutSystem
		nodes   []string
		edges   int // cables between switches
		skipped int // items skipped in all
	}{{
		name:   "the lab export: two MSX6710 gateways UFM types as hosts, one under its switch's system GUID",
		fabric: loadFixture(t, "lab"),
		leftOut: []LeftOutSystem{
			{SystemGUID: "0002c90300a1b2c0", SystemName: "gw-01", Type: "gateway", Links: 1},
			{SystemGUID: "0002c90300b0c001", SystemName: "MF0;lab-gw-1:MSX6710/GW", Type: "gateway", Links: 1, ListedAs: "host", Sign: nameWhy},
			{SystemGUID: "0002c90300b0d003", SystemName: "MF0;lab-gw-2:MSX6710/GW", Type: "gateway", Links: 1, ListedAs: "host", Sign: nameWhy},
		},
		nodes:   []string{"lab-01", "lab-02", "lab-04", "lab-05"},
		edges:   2,
		skipped: 8,
	}, {
		name:   "a gateway CA listed first under its switch's system GUID, its port too: the switch stays a 1U switch",
		fabric: shared,
		leftOut: []LeftOutSystem{
			{SystemGUID: gwCA, SystemName: gwName, Type: "gateway", Links: 1, ListedAs: "host", Sign: nameWhy},
		},
		nodes:   []string{"gpu-01"},
		edges:   1,
		skipped: 1,
	}, {
		name:   "server_operation_mode Gateway or Router, or an HCA described as a gateway's",
		fabric: byMode,
		leftOut: []LeftOutSystem{
			{SystemGUID: "0002c90300e4a000", SystemName: "skyway-01", Type: "gateway", Links: 1, ListedAs: "host", Sign: `its server_operation_mode is "Gateway"`},
			{SystemGUID: "0002c90300e4c000", SystemName: "gw-lab", Type: "gateway", Links: 1, ListedAs: "host",
				Sign: `its HCA's description "MF0;gw-lab:MSX6710/GW" is a gateway's (unit "GW")`},
			{SystemGUID: "0002c90300e4b000", SystemName: "ib-router-1", Type: "router", Links: 1, ListedAs: "host", Sign: `its server_operation_mode is "Router"`},
		},
		nodes:   []string{"gpu-01"},
		skipped: 3,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(tc.fabric, Options{})
			if diff := cmp.Diff(tc.leftOut, rep.LeftOut); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
			var nodes []string
			for _, n := range in.Nodes {
				nodes = append(nodes, n.Node)
			}
			if diff := cmp.Diff(tc.nodes, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if len(in.SwitchLinks) != tc.edges || len(rep.Skipped) != tc.skipped {
				t.Errorf("%d switch links, %d skipped (%q); want %d and %d", len(in.SwitchLinks), len(rep.Skipped), rep.Skipped, tc.edges, tc.skipped)
			}
			// Every system left out is a host note: the aggregator's Event on the Lease names it with its type.
			var want, got []ib.HostNote
			for _, s := range tc.leftOut {
				want = append(want, ib.HostNote{Host: s.SystemName, GUID: ib.GUID(s.SystemGUID), Reason: s.Reason()})
			}
			for _, n := range rep.Notes() {
				for _, s := range tc.leftOut {
					if string(n.GUID) == s.SystemGUID {
						got = append(got, n)
					}
				}
			}
			less := func(a, b ib.HostNote) bool { return a.GUID < b.GUID }
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
	// The switch whose system GUID the gateway CA gave is a plain switch, identified by its ASIC's GUID.
	in, _ := Evidence(shared, Options{})
	if want := switchID(sw); in.SwitchLinks[0].A != want && in.SwitchLinks[0].B != want {
		t.Errorf("switch links %+v, want one end %s", in.SwitchLinks, want)
	}
}

func TestLeftOutGatewayListedAsHostReason(t *testing.T) {
	s := LeftOutSystem{SystemGUID: "0002c90300b0c001", SystemName: "MF0;gw-1:MSX6710/GW", Type: "gateway", Links: 1, ListedAs: "host",
		Sign: `its name is a gateway's node description (unit "GW")`}
	for _, tc := range []struct{ got, want string }{
		{s.Reason(), `UFM lists it as a host, but its name is a gateway's node description (unit "GW"): a gateway, not a node to place`},
		{s.String(), `gateway 0002c90300b0c001 ("MF0;gw-1:MSX6710/GW"): UFM lists it as a host, but its name is a gateway's node description (unit "GW"); left out with its 1 cable`},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func TestIsGatewayDescription(t *testing.T) {
	for _, tc := range []struct {
		desc string
		want bool
	}{
		{"MF0;gw-1:MSX6710/GW", true},
		{"  mf0;gw-1:SX6036G/gw ", true},
		{"MF0;gw-1:MSX6710/GW:1", true}, // a port after it
		{"MF0;gw-1:MSX6710/U1", false},  // the gateway's switch
		{"MF0;dir-01:CS7520/L05/U1", false},
		{"gw-01 mlx5_0", false},
		{"MSX6710/GW", false}, // not a managed system's "MF0;<name>:<model>/<unit>"
		{"", false},
	} {
		if got := isGatewayDescription(tc.desc); got != tc.want {
			t.Errorf("isGatewayDescription(%q) = %v, want %v", tc.desc, got, tc.want)
		}
	}
}
