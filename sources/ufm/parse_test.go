package ufm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseReadsUFMAnswers(t *testing.T) {
	// UFM's own sample answers (REST API guide, UFM SDK), with members fabricmap does not use.
	systems, err := ParseSystems([]byte(`[{"capabilities": ["burn_cables_transceivers"], "cpu_speed": 0,
		"description": "MQM8700", "guid": "1c34da0300728606", "ip": "0.0.0.0", "model": "MQM8700", "modules": [],
		"name": "1c34da0300728606", "ports": ["1c34da0300728606_1", {"name": "1c34da0300728606_2", "number": 2}, 7],
		"role": "tor", "system_guid": "1c34da0300728606", "system_name": "SLG01-02", "type": "switch",
		"temperature": {"value": 40}, "total_alarms": 0, "server_operation_mode": "Switch", "sm_mode": "noSM"}, null]`))
	if err != nil {
		t.Fatal(err)
	}
	wantSystem := System{SystemGUID: "1c34da0300728606", GUID: "1c34da0300728606", Name: "1c34da0300728606",
		SystemName: "SLG01-02", Type: "switch", Description: "MQM8700", IP: "0.0.0.0", Model: "MQM8700", Role: "tor",
		ServerOperationMode: "Switch", Ports: []string{"1c34da0300728606_1", "1c34da0300728606_2", "7"}}
	if diff := cmp.Diff([]System{wantSystem}, systems); diff != "" {
		t.Errorf("systems (-want +got):\n%s", diff)
	}

	links, err := ParseLinks([]byte(`{"data": [{"source_guid": "900a840300ac8c40", "source_port": 5,
		"destination_guid": "9c0591030085abc0", "destination_port": "5", "source_port_dname": "1/3/1",
		"width": "4x", "source_port_node_description": "sw-ufm-ndr03:1/3/1",
		"destination_port_node_description": "sw-ufm-ndr04:1/3/1", "name": "900a840300ac8c40_5:9c0591030085abc0_5",
		"capabilities": ["collect_system_dump"], "cable_info": {}}], "page_number": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	wantLink := Link{Name: "900a840300ac8c40_5:9c0591030085abc0_5", SourceGUID: "900a840300ac8c40",
		DestinationGUID: "9c0591030085abc0", SourcePort: "5", DestinationPort: "5", SourcePortDName: "1/3/1",
		SourceNodeDescription: "sw-ufm-ndr03:1/3/1", DestinationNodeDescription: "sw-ufm-ndr04:1/3/1", Width: "4x"}
	if len(links) != 1 || links[0] != wantLink {
		t.Errorf("links = %+v\nwant %+v", links, wantLink)
	}

	ports, err := ParsePorts([]byte(`[{"guid": "0c42a10300280000", "systemID": "0c42a10300280000", "number": 1,
		"external_number": 1, "name": "0c42a10300280000_1", "node_description": "luna-0218 mlx5_4", "module": "N/A",
		"peer_guid": "0c42a103005de2f0", "peer_node_name": "SLG02-07", "active_speed": null},
		{"guid": "0c42a10300280001", "system_id": "0c42a10300280000"},
		{"guid": "0c42a10300280002", "system_guid": "0c42a10300280000"}]`))
	if err != nil {
		t.Fatal(err)
	}
	wantPorts := []Port{
		{Name: "0c42a10300280000_1", GUID: "0c42a10300280000", SystemID: "0c42a10300280000", NodeDescription: "luna-0218 mlx5_4", Module: "N/A"},
		{GUID: "0c42a10300280001", SystemID: "0c42a10300280000"},
		{GUID: "0c42a10300280002", SystemID: "0c42a10300280000"},
	}
	if diff := cmp.Diff(wantPorts, ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

func TestParseErrorsNameTheEndpointAndTheFault(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) error
		in    string
		want  string
	}{
		{"empty", parseSystems, "  \n", "UFM resources/systems: empty answer"},
		{"truncated", parseLinks, `[{"source_guid": "900a84`, "UFM resources/links: truncated JSON"},
		{"truncated after an entry", parsePorts, `[{"guid": "1"},`, "UFM resources/ports: truncated JSON"},
		{"garbage", parseSystems, `<html>502 Bad Gateway</html>`, `not JSON (starts with "<html>502`},
		{"bad byte", parseLinks, `[{"source_guid": "1"} {"x": 1}]`, "malformed JSON at byte 23"},
		{"trailing data", parseSystems, `[] []`, "malformed JSON"},
		{"an object", parseSystems, `{"error": "no such resource"}`, `without a "data" array`},
		{"a string", parsePorts, `"ok"`, "got a JSON string, want an array"},
		{"entries are no objects", parseLinks, `[{"name": "a"}, 42]`, "entry 1 is a JSON number, want an object"},
		{"data is no array", parseLinks, `{"data": {"a": 1}}`, "unexpected JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func parseSystems(b []byte) error { _, err := ParseSystems(b); return err }
func parseLinks(b []byte) error   { _, err := ParseLinks(b); return err }
func parsePorts(b []byte) error   { _, err := ParsePorts(b); return err }

func TestLoadDump(t *testing.T) {
	f := loadFixture(t, "railopt")
	if len(f.Systems) != 20 || len(f.Links) != 76 || len(f.Ports) != 152 {
		t.Errorf("railopt: %d systems, %d links, %d ports; want 20, 76, 152", len(f.Systems), len(f.Links), len(f.Ports))
	}
	lab := loadFixture(t, "lab") // no ports.json: that is fine
	if len(lab.Ports) != 0 || len(lab.Links) != 14 {
		t.Errorf("lab: %d ports, %d links; want 0 and 14", len(lab.Ports), len(lab.Links))
	}

	dir := t.TempDir()
	if _, err := LoadDump(dir); err == nil || !strings.Contains(err.Error(), "systems.json") {
		t.Errorf("empty folder: %v, want an error naming systems.json", err)
	}
	for name, body := range map[string]string{DumpSystemsFile: "[]", DumpLinksFile: `[{"name": "x"`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadDump(dir); err == nil || !strings.Contains(err.Error(), "links.json: UFM resources/links: truncated JSON") {
		t.Errorf("truncated links.json: %v, want an error naming the file and the fault", err)
	}
}
