package lldp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// leaf01 is the neighbour the lldpcli fixtures describe on ens1f0np0, as far as each shows it.
var leaf01 = Sighting{Interface: "ens1f0np0", Neighbor: Neighbor{
	Source: v1alpha1.SourceLLDPD, ChassisID: "0c:42:a1:aa:bb:cc", ChassisIDSubtype: "mac",
	PortID: "Ethernet1/1", PortIDSubtype: "ifName", TTL: 120 * time.Second, SystemName: "leaf01",
}}

func withNeighbor(s Sighting, edit func(*Neighbor)) Sighting {
	edit(&s.Neighbor)
	return s
}

func TestParseLLDPCLI(t *testing.T) {
	for _, tc := range []struct {
		file     string
		want     []Sighting
		warnings []string
	}{
		{"lldpcli-single.json", []Sighting{withNeighbor(leaf01, func(n *Neighbor) {
			n.SystemDescription = "SONiC Software Version: SONiC.202405 - HwSku: Mellanox-SN4600C"
			n.ManagementAddress = "10.0.0.11"
			n.PortDescription = "to-gnode7-p0"
			n.MaxFrameSize = 9216
			n.PortVLANID = 100
			n.Aggregation = &LinkAggregation{Capable: true, Enabled: true, PortID: 100001}
		})}, nil},
		{"lldpcli-multi.json", []Sighting{
			withNeighbor(leaf01, func(n *Neighbor) { n.ManagementAddress = "fd00::11" }),
			{Interface: "ens1f1np1", Neighbor: Neighbor{
				Source: v1alpha1.SourceLLDPD, ChassisID: "FDO1234X0YZ", ChassisIDSubtype: "local",
				PortID: "Eth1/2", PortIDSubtype: "local", TTL: 180 * time.Second,
				SystemDescription: "Cisco Nexus Operating System (NX-OS) Software", ManagementAddress: "192.0.2.12",
				PortDescription: "Ethernet1/2", PortVLANID: 20,
			}},
		}, []string{"lldpcli neighbour on ens2f0np0: no chassis; skipped"}},
		{"lldpcli-json0.json", []Sighting{withNeighbor(leaf01, func(n *Neighbor) {
			n.SystemDescription = "SONiC"
			n.ManagementAddress = "10.0.0.11"
			n.PortDescription = "to-gnode7-p0"
		})}, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, warnings, err := ParseLLDPCLI(readFixture(t, tc.file))
			if err != nil {
				t.Fatalf("ParseLLDPCLI: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sightings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLLDPCLIEmptyAndGarbage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		wantErr string
	}{
		{"no neighbours", `{"lldp": {}}`, ""},
		{"no neighbours, json0", `{"lldp": [{}]}`, ""},
		{"interface without neighbour data", `{"lldp": {"interface": {"eth0": "x"}}}`, ""},
		{"empty input", ``, "parse lldpcli JSON"},
		{"plain text output", "-------------------------------------------------------------------------------\nLLDP neighbors:", "parse lldpcli JSON"},
		{"truncated JSON", `{"lldp": {"interface": {"eth0": {`, "parse lldpcli JSON"},
		{"not an object", `[1, 2]`, "not an object"},
		{"no lldp key", `{"lldpd": {}}`, `no "lldp" key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := ParseLLDPCLI([]byte(tc.input))
			if tc.wantErr == "" {
				if err != nil || len(got) != 0 {
					t.Errorf("ParseLLDPCLI = %v, %v; want nothing and no error", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseLLDPCLI error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
