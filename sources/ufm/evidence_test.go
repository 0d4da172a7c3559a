package ufm

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

func loadFixture(t testing.TB, name string) *Fabric {
	t.Helper()
	f, err := LoadDump("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func isStorage(dev string) bool { return dev == "mlx5_8" }

// onlyNodes is a node-name rule that knows a fixed set of Kubernetes nodes.
func onlyNodes(nodes ...string) func(Host) string {
	return func(h Host) string {
		if n := DefaultNodeName(h); slices.Contains(nodes, n) {
			return n
		}
		return ""
	}
}

func TestEvidenceGivesTheFabricsTree(t *testing.T) {
	tests := []struct {
		name, fixture string
		opts          Options
		want          []string // tree outline
		unplaced      []string
		unmapped      []string // "<system GUID>: <part of the reason>"
		skipped       []string // a substring of each skipped item, in order
	}{{
		name:    "two tiers, rail-optimised: each scalable unit's rail leaves share hosts and form one domain",
		fixture: "railopt",
		opts:    Options{StorageDevice: isStorage},
		want: []string{
			"fabric(2)ib-su1-leaf-r1-rails,ib-su2-leaf-r1-rails",
			"ib-su1-leaf-r1-rails(1)dgx-01,dgx-02,dgx-03,dgx-04,ufm-01",
			"ib-su2-leaf-r1-rails(1)dgx-05,dgx-06,dgx-07,dgx-08", // dgx-06 with one rail down
		},
	}, {
		name:    "without storage classification the storage leaf joins both units into one domain",
		fixture: "railopt",
		want: []string{
			"fabric(2)ib-stor-leaf-1-rails",
			"ib-stor-leaf-1-rails(1)dgx-01,dgx-02,dgx-03,dgx-04,dgx-05,dgx-06,dgx-07,dgx-08,ufm-01",
		},
	}, {
		name:     "hosts that are no Kubernetes node are reported, not placed",
		fixture:  "railopt",
		opts:     Options{StorageDevice: isStorage, NodeName: onlyNodes("dgx-01", "dgx-02", "dgx-05", "dgx-06", "dgx-07", "dgx-08")},
		unmapped: []string{"946dae0300c10300: no node", "946dae0300c10400: no node", "946dae0300c1ff00: no node"},
		want: []string{
			"fabric(2)ib-su1-leaf-r1-rails,ib-su2-leaf-r1-rails",
			"ib-su1-leaf-r1-rails(1)dgx-01,dgx-02",
			"ib-su2-leaf-r1-rails(1)dgx-05,dgx-06,dgx-07,dgx-08",
		},
	}, {
		name:    "three tiers: leaves, pod spines, cores as root; hosts placed through the ports",
		fixture: "threetier",
		want: []string{
			"fabric(3)ib-p1-spine-1-spines,ib-p2-spine-1-spines",
			"ib-p1-leaf-1(1)node-01,node-02",
			"ib-p1-leaf-2(1)node-03,node-04",
			"ib-p1-spine-1-spines(2)ib-p1-leaf-1,ib-p1-leaf-2",
			"ib-p2-leaf-1(1)node-05,node-06",
			"ib-p2-leaf-2(1)node-07,node-08",
			"ib-p2-spine-1-spines(2)ib-p2-leaf-1,ib-p2-leaf-2",
		},
	}, {
		// The director is one switch, whose line cards hold hosts: one leaf named after the chassis. The 1U
		// spine above the director and the blade switches joins them all, so it is the root; the three blade
		// switches share the ASIC's default description, which names none of them. UFM's own servers are
		// nodes here: no host rules.
		name:    "a lab export: a director listed per ASIC, blade switches of one default description",
		fixture: "chassis",
		want: []string{
			"fabric(2)guid-0002c90200a0b100,guid-0002c90200a0b200,guid-0002c90200a0b300,ib-dir-01",
			"guid-0002c90200a0b100(1)blade-01,blade-02",
			"guid-0002c90200a0b200(1)blade-03,blade-04",
			"guid-0002c90200a0b300(1)blade-05,blade-06",
			"ib-dir-01(1)gpu-01,gpu-02,gpu-03,gpu-04,gpu-05,gpu-06,mgmt-head-1,mgmt-head-2",
		},
		skipped: []string{`gateway 0002c90300f5a000 ("skyway-01"): neither a switch nor a host; left out with its 2 cables`},
	}, {
		name:     "an irregular lab fabric: what cannot be used is reported, the rest is a valid tree",
		fixture:  "lab",
		want:     []string{"fabric(2)lab-sw-1-rails", "lab-sw-1-rails(1)lab-01,lab-02"},
		unplaced: []string{"lab-04", "lab-05"},
		unmapped: []string{`b8599f03000a7900: mapped to "lab_03": node name is not a DNS-1123 subdomain`},
		skipped: []string{
			`gateway 0002c90300a1b2c0 ("gw-01"): neither a switch nor a host; left out with its 1 cable`,
			`gateway 0002c90300b0c001 ("MF0;lab-gw-1:MSX6710/GW"): UFM lists it as a host, but its name is a gateway's node description`,
			`gateway 0002c90300b0d003 ("MF0;lab-gw-2:MSX6710/GW"): UFM lists it as a host, but its name is a gateway's node description`,
			`system 12 ("broken")`,
			"two hosts",
			"loopback",
			"e41d2d0300226020",
			`"zzz" is no GUID`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(loadFixture(t, tc.fixture), tc.opts)
			tree, probs := topology.Build(in, topology.BuildOptions{})
			if len(probs) > 0 {
				t.Errorf("problems: %v", probs)
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if !slices.Equal(tree.Unplaced, tc.unplaced) {
				t.Errorf("unplaced = %v, want %v", tree.Unplaced, tc.unplaced)
			}
			if len(rep.Unmapped) != len(tc.unmapped) {
				t.Fatalf("unmapped = %v, want %d hosts", rep.Unmapped, len(tc.unmapped))
			}
			for i, u := range rep.Unmapped {
				if guid, part, _ := strings.Cut(tc.unmapped[i], ": "); u.SystemGUID != guid || !strings.Contains(u.Reason, part) {
					t.Errorf("unmapped[%d] = %v, want %s", i, u, tc.unmapped[i])
				}
			}
			if len(rep.Skipped) != len(tc.skipped) {
				t.Fatalf("skipped = %q, want %d items", rep.Skipped, len(tc.skipped))
			}
			for i, s := range tc.skipped {
				if !strings.Contains(rep.Skipped[i], s) {
					t.Errorf("skipped[%d] = %q, want it to mention %q", i, rep.Skipped[i], s)
				}
			}
		})
	}
}

// The switch identifiers must be those the agents' InfiniBand evidence gives (ChassisIDSubtype "guid",
// the GUID as ibnetdiscover prints it): UFM and the reports must agree on the switch, whatever the case or
// "0x" prefix of the GUIDs.
func TestEvidenceSwitchIDsMatchReports(t *testing.T) {
	in, _ := Evidence(loadFixture(t, "threetier"), Options{})
	// node-01 and node-02 are on ib-p1-leaf-1; a report names it as ibnetdiscover prints it.
	report := topology.NodeEvidence{Node: "node-01", Source: "reports", Links: []topology.SwitchLink{
		{SwitchID: topology.SwitchID("guid", "0xB83FD20300C01120"), SwitchName: "ib-p1-leaf-1", Port: "1"},
	}}
	var node01 topology.NodeEvidence
	for _, n := range in.Nodes {
		if n.Node == "node-01" {
			node01 = n
		}
	}
	want := topology.SwitchLink{SwitchID: "guid:b83fd20300c01120", SwitchName: "ib-p1-leaf-1", Port: "1"}
	if node01.Source != Name || len(node01.Links) != 1 || node01.Links[0] != want || report.Links[0].SwitchID != want.SwitchID {
		t.Fatalf("node-01 = %+v, want one link %+v", node01, want)
	}
	merged, conflicts := topology.Merge(topology.Input{Nodes: []topology.NodeEvidence{report}}, in)
	if len(conflicts) > 0 {
		t.Errorf("conflicts between the report and UFM: %v", conflicts)
	}
	tree, _ := topology.Build(merged, topology.BuildOptions{})
	if got := tree.PathOf("node-01"); len(got) != 3 || got[0].Name != "ib-p1-leaf-1" {
		t.Errorf("node-01 path = %v, want ib-p1-leaf-1 below the spines and the root", got)
	}
}

func TestEvidenceLinksAndEdges(t *testing.T) {
	in, rep := Evidence(loadFixture(t, "railopt"), Options{StorageDevice: isStorage})
	if len(rep.Skipped)+len(rep.Unmapped) > 0 {
		t.Errorf("report = %+v, want nothing left out", rep)
	}
	if len(in.Nodes) != 9 {
		t.Fatalf("nodes = %d, want 8 DGX and the UFM server", len(in.Nodes))
	}
	dgx01 := in.Nodes[0]
	wantLinks := []topology.SwitchLink{
		{SwitchID: "guid:b83fd20300b01100", SwitchName: "ib-su1-leaf-r1", Port: "1"},
		{SwitchID: "guid:b83fd20300b01200", SwitchName: "ib-su1-leaf-r2", Port: "1"},
		{SwitchID: "guid:b83fd20300b01300", SwitchName: "ib-su1-leaf-r3", Port: "1"},
		{SwitchID: "guid:b83fd20300b01400", SwitchName: "ib-su1-leaf-r4", Port: "1"},
		{SwitchID: "guid:b83fd20300b00101", SwitchName: "ib-stor-leaf-1", Port: "1", Storage: true},
	}
	if dgx01.Node != "dgx-01" || dgx01.Source != Name || !cmp.Equal(dgx01.Links, wantLinks) {
		t.Errorf("dgx-01 = %+v\nlinks (-want +got):\n%s", dgx01, cmp.Diff(wantLinks, dgx01.Links))
	}
	if n := in.Nodes[5]; n.Node != "dgx-06" || len(n.Links) != 4 {
		t.Errorf("%s has %d links, want dgx-06 with 4 (rail 3 down)", n.Node, len(n.Links))
	}
	// 9 leaves × 2 spines, each pair once although two cables join it.
	if len(in.SwitchLinks) != 18 {
		t.Errorf("switch links = %d, want 18", len(in.SwitchLinks))
	}
	for i, e := range in.SwitchLinks {
		if e.A >= e.B || e.AName == "" || e.BName == "" || e.Source != Name {
			t.Errorf("switch link %+v: want ordered, named ends from ufm", e)
		}
		if i > 0 && (in.SwitchLinks[i-1].A > e.A || in.SwitchLinks[i-1].A == e.A && in.SwitchLinks[i-1].B >= e.B) {
			t.Errorf("switch links out of order at %d: %+v", i, e)
		}
	}
}

// A modular director is one switch for topology, whatever way UFM lists it: one entry for the chassis
// (director: its ASICs known from the ports), or one entry per ASIC of the chassis' system GUID (chassis, and
// the brief fabrics below). Its hosts land in one domain named after the chassis, whichever line card they
// are cabled to; cables between its own ASICs vanish; a 1U switch keeps its node GUID.
func TestEvidenceFoldsDirectors(t *testing.T) {
	const chassisGUID = "248a07030077c3b0"
	perASIC := func(systemName ...string) *Fabric {
		f := &Fabric{
			Systems: []System{
				{SystemGUID: "b8599f0300b048b0", GUID: "b8599f0300b048b0", SystemName: "mtlx843 HCA-1", Type: "host"},
				{SystemGUID: "b8599f0300b049b0", GUID: "b8599f0300b049b0", SystemName: "mtlx844 HCA-1", Type: "host"},
			},
			Links: []Link{
				{SourceGUID: "0x7cfe900300f73d80", SourcePort: "1", DestinationGUID: "0xb8599f0300b048b0", DestinationPort: "1",
					SourceNodeDescription: "MF0;dc-dir-01:CS7520/L01/U1:1"},
				{SourceGUID: "0x7cfe900300f73dc0", SourcePort: "1", DestinationGUID: "0xb8599f0300b049b0", DestinationPort: "1",
					SourceNodeDescription: "MF0;dc-dir-01:CS7520/L02/U1:1"},
				{SourceGUID: "7cfe900300f73d80", SourcePort: "19", DestinationGUID: "7cfe900300f73e00", DestinationPort: "1"}, // L01 to S01
				{SourceGUID: "7cfe900300f73dc0", SourcePort: "19", DestinationGUID: "7cfe900300f73e00", DestinationPort: "2"}, // L02 to S01
			},
		}
		for i, g := range []string{"7cfe900300f73d80", "7cfe900300f73dc0", "7cfe900300f73e00"} {
			f.Systems = append(f.Systems, System{SystemGUID: chassisGUID, GUID: g, SystemName: systemName[i], Type: "switch"})
		}
		return f
	}
	type link struct{ node, switchID, switchName, port string }
	tests := []struct {
		name    string
		fabric  *Fabric
		domains map[string][]string // a leaf domain → the hosts that land in it
		links   []link              // some nodes' switch links
		edges   []string            // "<A> <B>" of every switch link
		skipped []string
	}{{
		name:    "one entry for the chassis, its ASICs from the ports: hosts on line card L04",
		fabric:  loadFixture(t, "director"),
		domains: map[string][]string{"ib-director-01": {"gpu-09", "gpu-10"}, "ib-leaf-1": {"gpu-01", "gpu-02"}},
		links:   []link{{"gpu-09", "guid:0c42a10300d10000", "ib-director-01", "L04/29"}, {"gpu-01", "guid:b83fd20300d00100", "ib-leaf-1", "1"}},
		edges: []string{
			"guid:0c42a10300d10000 guid:b83fd20300d00100", "guid:0c42a10300d10000 guid:b83fd20300d00200",
			"guid:0c42a10300d10000 guid:b83fd20300d00300", "guid:0c42a10300d10000 guid:b83fd20300d00400",
		},
	}, {
		name:    "one entry per ASIC, with the cables inside the chassis: hosts on line cards L01 to L03",
		fabric:  loadFixture(t, "chassis"),
		domains: map[string][]string{"ib-dir-01": {"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06", "mgmt-head-1", "mgmt-head-2"}},
		links:   []link{{"gpu-01", "guid:0c42a10300f20000", "ib-dir-01", "L01/1"}, {"gpu-06", "guid:0c42a10300f20000", "ib-dir-01", "L03/2"}},
		edges: []string{
			"guid:0002c90200a0b100 guid:248a070300f20100", "guid:0002c90200a0b200 guid:248a070300f20100",
			"guid:0002c90200a0b300 guid:248a070300f20100", "guid:0c42a10300f20000 guid:248a070300f20100",
		},
		skipped: []string{`gateway 0002c90300f5a000 ("skyway-01"): neither a switch nor a host; left out with its 2 cables`},
	}, {
		name:    "per-ASIC entries named MF0;<name>:<model>/<module>/U1: the chassis takes the name, the module qualifies the port",
		fabric:  perASIC("MF0;dc-dir-01:CS7520/L01/U1", "MF0;dc-dir-01:CS7520/L02/U1", "MF0;dc-dir-01:CS7520/S01/U1"),
		domains: map[string][]string{"dc-dir-01": {"mtlx843", "mtlx844"}},
		links:   []link{{"mtlx843", "guid:" + chassisGUID, "dc-dir-01", "L01/1"}, {"mtlx844", "guid:" + chassisGUID, "dc-dir-01", "L02/1"}},
	}, {
		name:    "per-ASIC entries without system names: the chassis is named after its ASICs' descriptions",
		fabric:  perASIC("", "", ""),
		domains: map[string][]string{"dc-dir-01": {"mtlx843", "mtlx844"}},
		links:   []link{{"mtlx843", "guid:" + chassisGUID, "dc-dir-01", "7cfe900300f73d80/1"}},
	}, {
		name: "a 1U switch whose system GUID is not its node GUID is no chassis",
		fabric: &Fabric{
			Systems: []System{
				{SystemGUID: "b8599f0300b048b0", GUID: "b8599f0300b048b0", SystemName: "mtlx843", Type: "host"},
				{SystemGUID: "248a070300f88000", GUID: "248a070300f88000", SystemName: "MF0;lab-sw-9:MQM8700/U1", Type: "switch",
					Ports: []string{"248a070300f88fe9_1"}},
			},
			Links: []Link{{SourceGUID: "248a070300f88fe9", SourcePort: "3", DestinationGUID: "b8599f0300b048b0", DestinationPort: "1"}},
		},
		domains: map[string][]string{"lab-sw-9": {"mtlx843"}},
		links:   []link{{"mtlx843", "guid:248a070300f88fe9", "lab-sw-9", "3"}},
	}, {
		name: "a loopback on one ASIC of a chassis is still a loopback",
		fabric: func() *Fabric {
			f := perASIC("MF0;dc-dir-01:CS7520/L01/U1", "MF0;dc-dir-01:CS7520/L02/U1", "MF0;dc-dir-01:CS7520/S01/U1")
			f.Links = append(f.Links, Link{SourceGUID: "7cfe900300f73d80", SourcePort: "30", DestinationGUID: "7cfe900300f73d80", DestinationPort: "31"})
			return f
		}(),
		domains: map[string][]string{"dc-dir-01": {"mtlx843", "mtlx844"}},
		skipped: []string{"link 7cfe900300f73d80_30:7cfe900300f73d80_31: a loopback cable between two ports of one switch"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(tc.fabric, Options{})
			tree, probs := topology.Build(in, topology.BuildOptions{})
			if err := tree.Validate(); err != nil || len(probs) > 0 {
				t.Fatalf("tree: %v, problems %v", err, probs)
			}
			got := map[string][]string{}
			for _, hosts := range tc.domains {
				for _, h := range hosts {
					leaf := "(unplaced)"
					if p := tree.PathOf(h); len(p) > 0 {
						leaf = p[0].Name
					}
					got[leaf] = append(got[leaf], h)
				}
			}
			for _, hosts := range got {
				slices.Sort(hosts)
			}
			if diff := cmp.Diff(tc.domains, got); diff != "" {
				t.Errorf("hosts by the domain they land in (-want +got):\n%s", diff)
			}
			byNode := map[string][]topology.SwitchLink{}
			for _, n := range in.Nodes {
				byNode[n.Node] = n.Links
			}
			for _, l := range tc.links {
				want := []topology.SwitchLink{{SwitchID: l.switchID, SwitchName: l.switchName, Port: l.port}}
				if diff := cmp.Diff(want, byNode[l.node]); diff != "" {
					t.Errorf("%s's links (-want +got):\n%s", l.node, diff)
				}
			}
			var edges []string
			for _, e := range in.SwitchLinks {
				edges = append(edges, e.A+" "+e.B)
			}
			if diff := cmp.Diff(tc.edges, edges); diff != "" {
				t.Errorf("switch links (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, rep.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// The same fabric, its entries in another order, gives the same input.
func TestEvidenceIsDeterministic(t *testing.T) {
	for _, name := range []string{"railopt", "threetier", "director", "dualhome", "chassis", "lab"} {
		f := loadFixture(t, name)
		want, wantRep := Evidence(f, Options{})
		r := rand.New(rand.NewPCG(1, 2))
		for range 5 {
			r.Shuffle(len(f.Links), func(i, j int) { f.Links[i], f.Links[j] = f.Links[j], f.Links[i] })
			r.Shuffle(len(f.Ports), func(i, j int) { f.Ports[i], f.Ports[j] = f.Ports[j], f.Ports[i] })
			got, rep := Evidence(f, Options{})
			if diff := cmp.Diff(want, got) + cmp.Diff(wantRep.Unmapped, rep.Unmapped); diff != "" || len(rep.Skipped) != len(wantRep.Skipped) {
				t.Fatalf("%s: shuffled links give another input (input, then unmapped; -want +got):\n%s", name, diff)
			}
		}
	}
}

// The brief systems of threetier list no HCA: without the ports (a dump without ports.json) the hosts' link
// ends are reported, not guessed.
func TestEvidenceWithoutPorts(t *testing.T) {
	three := loadFixture(t, "threetier")
	three.Ports = nil
	in, rep := Evidence(three, Options{})
	// Without the ports, no HCA can be placed: the hosts have no link, the switches are still cabled.
	for _, n := range in.Nodes {
		if len(n.Links) > 0 {
			t.Errorf("%s placed without ports: %+v", n.Node, n.Links)
		}
	}
	if len(rep.Skipped) != 8 || len(in.SwitchLinks) != 16 {
		t.Errorf("skipped %d links and kept %d switch links, want 8 and 16", len(rep.Skipped), len(in.SwitchLinks))
	}
}

func TestDefaultNodeName(t *testing.T) {
	for _, tc := range []struct {
		h    Host
		want string
	}{
		{Host{SystemName: "luna-0218"}, "luna-0218"},
		{Host{SystemName: "DGX-001 HCA-1"}, "dgx-001"},
		{Host{SystemName: "  ", Descriptions: []string{"gpu-01 mlx5_0"}}, "gpu-01"},
		{Host{SystemName: "Mellanox Technologies Aggregation Node"}, ""},
		{Host{}, ""},
	} {
		if got := DefaultNodeName(tc.h); got != tc.want {
			t.Errorf("DefaultNodeName(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
}
