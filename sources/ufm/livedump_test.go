package ufm

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// A live UFM and a dump of its answers are read by the same code: the fixture served from an HTTP server on
// 127.0.0.1 and the same files read as a dump give the same fabric, the same evidence, the same report and
// the same tree. dualhome's ports name their systems by node GUID, which the systems resource gives as the
// hosts' "guid", not as their "system_guid".
func TestLiveAndDumpGiveTheSameEvidence(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		tree    []string // the tree's outline
		skipped []string
	}{{
		// Each pair's leaves share all their hosts (gpu-08 with one cable down) and form one domain; the
		// director above them is the root.
		fixture: "dualhome",
		tree: []string{
			"fabric(2)ib-leaf-1a-rails,ib-leaf-2a-rails",
			"ib-leaf-1a-rails(1)gpu-01,gpu-02,gpu-03,gpu-04",
			"ib-leaf-2a-rails(1)gpu-05,gpu-06,gpu-07,gpu-08",
		},
		skipped: []string{`gateway 0002c90300e4a000 ("skyway-01"): neither a switch nor a host; left out with its 2 cables`},
	}, {
		// A director listed per ASIC, ports keyed by port GUID, blade switches of one default description:
		// the director's hosts in one domain named after it, every port placed without a warning.
		fixture: "chassis",
		tree: []string{
			"fabric(2)guid-0002c90200a0b100,guid-0002c90200a0b200,guid-0002c90200a0b300,ib-dir-01",
			"guid-0002c90200a0b100(1)blade-01,blade-02",
			"guid-0002c90200a0b200(1)blade-03,blade-04",
			"guid-0002c90200a0b300(1)blade-05,blade-06",
			"ib-dir-01(1)gpu-01,gpu-02,gpu-03,gpu-04,gpu-05,gpu-06,mgmt-head-1,mgmt-head-2",
		},
		skipped: []string{`gateway 0002c90300f5a000 ("skyway-01"): neither a switch nor a host; left out with its 2 cables`},
	}} {
		t.Run(tc.fixture, func(t *testing.T) {
			srv := httptest.NewServer(newFakeUFM(t, tc.fixture))
			defer srv.Close()
			var logs logBuffer
			live, err := mustClient(t, testConfig(t, srv, &logs)).Fabric(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dump := loadFixture(t, tc.fixture)
			if diff := cmp.Diff(dump, live); diff != "" {
				t.Errorf("fabric (-dump +live):\n%s", diff)
			}
			opts := Options{StorageDevice: isStorage}
			dumpIn, dumpRep := Evidence(dump, opts)
			liveIn, liveRep := Evidence(live, opts)
			if diff := cmp.Diff(dumpIn, liveIn); diff != "" {
				t.Errorf("evidence (-dump +live):\n%s", diff)
			}
			if diff := cmp.Diff(dumpRep, liveRep); diff != "" {
				t.Errorf("report (-dump +live):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, liveRep.Skipped); diff != "" || len(liveRep.Unmapped) > 0 {
				t.Errorf("unmapped %v; skipped (-want +got):\n%s", liveRep.Unmapped, diff)
			}
			tree, probs := topology.Build(liveIn, topology.BuildOptions{})
			if err := tree.Validate(); err != nil || len(probs) > 0 || len(tree.Unplaced) > 0 {
				t.Errorf("tree: %v, problems %v, unplaced %v", err, probs, tree.Unplaced)
			}
			if diff := cmp.Diff(tc.tree, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// A port's systemID is matched against the systems' system GUIDs and the node GUIDs they are known by (their
// "guid", their ports' names), and against nodes other ports placed, so a dual-homed host whose brief system
// entry lists no HCA keeps both its leaves.
func TestPortsMatchSystemsByNodeAndSystemGUID(t *testing.T) {
	const (
		sysGUID = "946dae0300c40100" // gpu-01's system GUID
		hca1    = "946dae0300c40101" // its HCAs' node GUIDs
		hca2    = "946dae0300c40102"
		leafA   = "b83fd20300e01100"
		leafB   = "b83fd20300e01200"
	)
	systems := []System{
		{SystemGUID: leafA, GUID: leafA, SystemName: "ib-leaf-1a", Type: "switch"},
		{SystemGUID: leafB, GUID: leafB, SystemName: "ib-leaf-1b", Type: "switch"},
		{SystemGUID: sysGUID, GUID: hca1, SystemName: "gpu-01", Type: "host"}, // brief: no port names
	}
	links := []Link{
		{SourceGUID: hca1, SourcePort: "1", DestinationGUID: leafA, DestinationPort: "1", SourceNodeDescription: "gpu-01 mlx5_0"},
		{SourceGUID: hca2, SourcePort: "1", DestinationGUID: leafB, DestinationPort: "1", SourceNodeDescription: "gpu-01 mlx5_1"},
	}
	port := func(guid, systemID string) Port {
		return Port{Name: guid + "_1", GUID: guid, SystemID: systemID, SystemName: "gpu-01"}
	}
	// keyedByPortGUID is a port as some UFM versions give it: "guid" and "systemID" are the port's own port
	// GUID, which no system lists; only the name gives the node.
	keyedByPortGUID := func(node, portGUID string) Port {
		return Port{Name: node + "_1", GUID: portGUID, SystemID: portGUID, SystemName: "gpu-01"}
	}
	bothLeaves := []topology.SwitchLink{
		{SwitchID: "guid:" + leafA, SwitchName: "ib-leaf-1a", Port: "1"},
		{SwitchID: "guid:" + leafB, SwitchName: "ib-leaf-1b", Port: "1"},
	}
	for _, tc := range []struct {
		name    string
		systems []System
		ports   []Port
		links   []topology.SwitchLink
		skipped []string
	}{{
		name:  "systemID is the system GUID",
		ports: []Port{port(hca1, sysGUID), port(hca2, sysGUID)},
		links: bothLeaves,
	}, {
		name:  "systemID is the node GUID the system is keyed by",
		ports: []Port{port(hca1, hca1), port(hca2, "0x"+hca1)},
		links: bothLeaves,
	}, {
		name: "systemID is a node GUID another port placed, listed after it",
		systems: []System{systems[0], systems[1],
			{SystemGUID: sysGUID, GUID: sysGUID, SystemName: "gpu-01", Type: "host"}},
		ports: []Port{port(hca2, hca1), port(hca1, sysGUID)},
		links: bothLeaves,
	}, {
		name:  "systemID is a node GUID nothing places: reported once, the other HCA still placed",
		ports: []Port{port(hca1, hca1), port(hca2, hca2), {Name: hca2 + "_2", GUID: hca2, SystemID: hca2, SystemName: "gpu-01"}},
		links: bothLeaves[:1],
		skipped: []string{
			`ports of system 946dae0300c40102 ("gpu-01"): resources/systems lists no system of that system GUID or node GUID, and none holds the port's node 946dae0300c40102`,
			`link 946dae0300c40102_1:b83fd20300e01200_1: end 946dae0300c40102 ("gpu-01 mlx5_1") belongs to no system that resources/systems or resources/ports list`,
		},
	}, {
		name:  "systemID is the port GUID: the node the port's name gives answers for the system",
		ports: []Port{keyedByPortGUID(hca1, "946dae0300c40181"), port(hca2, sysGUID)},
		links: bothLeaves,
	}, {
		name: "systemID is the port GUID, the node placed only by a port listed after it",
		ports: []Port{keyedByPortGUID(hca2, "946dae0300c40182"), keyedByPortGUID(hca1, "946dae0300c40181"),
			{Name: hca2 + "_1", GUID: hca2, SystemID: hca1, SystemName: "gpu-01"}},
		links: bothLeaves,
	}, {
		name:  "systemID is the port GUID of a node nothing places: reported, naming the node",
		ports: []Port{keyedByPortGUID(hca1, "946dae0300c40181"), keyedByPortGUID(hca2, "946dae0300c40182")},
		links: bothLeaves[:1],
		skipped: []string{
			`ports of system 946dae0300c40182 ("gpu-01"): resources/systems lists no system of that system GUID or node GUID, and none holds the port's node 946dae0300c40102 or 946dae0300c40182`,
			`link 946dae0300c40102_1:b83fd20300e01200_1: end 946dae0300c40102 ("gpu-01 mlx5_1") belongs to no system that resources/systems or resources/ports list`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Fabric{Systems: systems, Links: links, Ports: tc.ports}
			if tc.systems != nil {
				f.Systems = tc.systems
			}
			in, rep := Evidence(f, Options{})
			if len(in.Nodes) != 1 || in.Nodes[0].Node != "gpu-01" {
				t.Fatalf("nodes = %+v, want gpu-01", in.Nodes)
			}
			if diff := cmp.Diff(tc.links, in.Nodes[0].Links); diff != "" {
				t.Errorf("gpu-01's links (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, rep.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// The aggregator's source logs what it leaves out as warnings, each time that changes: the gateway (by count,
// type and name, apart from the other items left out) and the hosts that map to no node; its notes, which the
// aggregator turns into Events, list both.
func TestSourceWarnsOfWhatItLeavesOut(t *testing.T) {
	srv := httptest.NewServer(newFakeUFM(t, "dualhome"))
	defer srv.Close()
	var logs logBuffer
	src := &Source{Client: mustClient(t, testConfig(t, srv, &logs)), Log: logs.logger(),
		Options: Options{NodeName: onlyNodes("gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06", "gpu-07")}}
	if _, err := src.Evidence(context.Background()); err != nil {
		t.Fatal(err)
	}
	var hosts, systems, others []string
	for line := range strings.Lines(logs.String()) {
		switch {
		case !strings.Contains(line, "level=WARN"):
		case strings.Contains(line, "UFM hosts without"):
			hosts = append(hosts, line)
		case strings.Contains(line, "UFM gateways, routers"):
			systems = append(systems, line)
		case strings.Contains(line, "left out"):
			others = append(others, line)
		}
	}
	if len(hosts) != 1 || !strings.Contains(hosts[0], "count=1") || !strings.Contains(hosts[0], "host 946dae0300c40800 (gpu-08)") {
		t.Errorf("hosts warnings = %q, want one: gpu-08 without a node", hosts)
	}
	if len(systems) != 1 || !strings.Contains(systems[0], "count=1 gateway=1") || !strings.Contains(systems[0], "gateway skyway-01 (0002c90300e4a000)") {
		t.Errorf("left-out systems warnings = %q, want one: the gateway skyway-01, counted", systems)
	}
	if len(others) > 0 {
		t.Errorf("other left-out warnings = %q, want none: the gateway is said once", others)
	}
	wantNotes := []ib.HostNote{
		{Host: "skyway-01", GUID: "0002c90300e4a000", Reason: `UFM lists it as a gateway (type "gateway": a bridge to another network), not a node to place`},
		{Host: "gpu-08", GUID: "946dae0300c40800", Reason: "the node-name rule maps it to no node"},
	}
	if diff := cmp.Diff(wantNotes, src.Notes()); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// The same answer again says nothing new: the warnings are not repeated at every poll.
	before := strings.Count(logs.String(), "level=WARN")
	if _, err := src.Evidence(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := strings.Count(logs.String(), "level=WARN"); after != before {
		t.Errorf("an unchanged answer logged %d more warnings, want none", after-before)
	}
}

// In the chassis fixture the ports of gpu-05 and gpu-06 are keyed by their port GUIDs, which no system lists,
// as in a real export that gave 188 warnings "ports of system X list no system" for hosts it placed all the
// same: read from a live UFM, those ports resolve to their hosts through the node GUIDs their names begin
// with, and nothing is reported.
func TestPortsKeyedByPortGUIDResolveToTheirHosts(t *testing.T) {
	srv := httptest.NewServer(newFakeUFM(t, "chassis"))
	defer srv.Close()
	var logs logBuffer
	f, err := mustClient(t, testConfig(t, srv, &logs)).Fabric(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range f.Systems {
		known[s.SystemGUID], known[s.GUID] = true, true
	}
	var keyedByPort []string
	for _, p := range f.Ports {
		if !known[p.SystemID] {
			keyedByPort = append(keyedByPort, p.SystemName+" "+p.Name+" "+p.SystemID)
		}
	}
	want := []string{"gpu-05 946dae0300c50500_1 946dae0300c50580", "gpu-06 946dae0300c50600_1 946dae0300c50680"}
	if diff := cmp.Diff(want, keyedByPort); diff != "" {
		t.Fatalf("ports whose systemID names no system (-want +got):\n%s", diff)
	}
	in, rep := Evidence(f, Options{})
	for _, s := range rep.Skipped {
		if strings.HasPrefix(s, "ports of system") {
			t.Errorf("reported: %s", s)
		}
	}
	placed := 0
	for _, n := range in.Nodes {
		if n.Node == "gpu-05" || n.Node == "gpu-06" {
			placed++
			if len(n.Links) != 1 || n.Links[0].SwitchName != "ib-dir-01" || !strings.HasPrefix(n.Links[0].Port, "L03/") {
				t.Errorf("%s's links = %+v, want one to line card L03 of ib-dir-01", n.Node, n.Links)
			}
		}
	}
	if placed != 2 {
		t.Errorf("%d of gpu-05 and gpu-06 are nodes, want both", placed)
	}
}
