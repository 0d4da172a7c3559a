package ufm

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		skipped: []string{
			`gateway 0002c90300e4a000 ("skyway-01"): neither a switch nor a host; left out, with its links`,
			"link 0002c90300e4a001_1:b83fd20300e02100_20: end 0002c90300e4a001 is a gateway, neither a switch nor a host",
			"link 0002c90300e4a002_1:b83fd20300e02200_20: end 0002c90300e4a002 is a gateway, neither a switch nor a host",
		},
	}, {
		fixture: "director",
		tree: []string{
			"fabric(3)ib-director-01-l01-spines,ib-director-01-l04",
			"ib-director-01-l01-spines(2)ib-leaf-1,ib-leaf-2,ib-leaf-3,ib-leaf-4",
			"ib-director-01-l04(1)gpu-09,gpu-10",
			"ib-leaf-1(1)gpu-01,gpu-02",
			"ib-leaf-2(1)gpu-03,gpu-04",
			"ib-leaf-3(1)gpu-05,gpu-06",
			"ib-leaf-4(1)gpu-07,gpu-08",
		},
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
			`ports of system 946dae0300c40102 ("gpu-01"): resources/systems lists no system of that system GUID or node GUID`,
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

// The aggregator's source logs what it leaves out as warnings: the gateway and its links, and the hosts
// that map to no node.
func TestSourceWarnsOfWhatItLeavesOut(t *testing.T) {
	srv := httptest.NewServer(newFakeUFM(t, "dualhome"))
	defer srv.Close()
	var logs logBuffer
	src := &Source{Client: mustClient(t, testConfig(t, srv, &logs)), Log: logs.logger(),
		Options: Options{NodeName: onlyNodes("gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06", "gpu-07")}}
	if _, err := src.Evidence(context.Background()); err != nil {
		t.Fatal(err)
	}
	var hosts, leftOut string
	for line := range strings.Lines(logs.String()) {
		switch {
		case !strings.Contains(line, "level=WARN"):
		case strings.Contains(line, "UFM hosts without"):
			hosts = line
		case strings.Contains(line, "left out"):
			leftOut = line
		}
	}
	if !strings.Contains(hosts, "count=1") || !strings.Contains(hosts, "host 946dae0300c40800 (gpu-08)") {
		t.Errorf("hosts warning = %q, want gpu-08 without a node", hosts)
	}
	if !strings.Contains(leftOut, "count=3") || !strings.Contains(leftOut, `gateway 0002c90300e4a000 (\"skyway-01\")`) {
		t.Errorf("left-out warning = %q, want the gateway and its two links", leftOut)
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
