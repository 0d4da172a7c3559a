package ib

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseFile(t *testing.T, path string) (*Fabric, []Warning) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, warns, err := Parse(fh)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return f, warns
}

func TestParseSmallFixture(t *testing.T) {
	f, warns := parseFile(t, "testdata/small.txt")
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	const (
		spine = GUID("b83fd20300a10001")
		leaf  = GUID("b83fd20300a10002")
		an    = GUID("b83fd20300a10003")
		ca1   = GUID("946dae0300c20001")
		ca2   = GUID("946dae0300c20002")
		ca3   = GUID("946dae0300c20003")
		ca9   = GUID("0002c90300f00009")
	)
	want := &Fabric{
		Switches: map[GUID]*Switch{
			spine: {GUID: spine, PortGUID: spine, SystemImageGUID: spine, VendorID: 0x2c9, DeviceID: 0xd2f0, NumPorts: 65,
				Description: "MF0;ib-spine-01:MQM9700/U1", Name: "ib-spine-01", Model: "MQM9700", LID: 1, EnhancedPort0: true, Line: 10},
			leaf: {GUID: leaf, PortGUID: leaf, SystemImageGUID: leaf, VendorID: 0x2c9, DeviceID: 0xd2f0, NumPorts: 65,
				Description: "MF0;ib-leaf-01:MQM9700/U1", Name: "ib-leaf-01", Model: "MQM9700", LID: 2, EnhancedPort0: true, Line: 18},
		},
		CAs: map[GUID]*CA{
			an: {GUID: an, Kind: KindCA, SystemImageGUID: leaf, VendorID: 0x2c9, DeviceID: 0xcf09, NumPorts: 1,
				Description: "Mellanox Technologies Aggregation Node", Line: 31},
			ca1: {GUID: ca1, Kind: KindCA, SystemImageGUID: ca1, VendorID: 0x2c9, DeviceID: 0x1021, NumPorts: 1,
				Description: "dgx-a01 mlx5_0", Host: "dgx-a01", Device: "mlx5_0", Line: 38},
			ca2: {GUID: ca2, Kind: KindCA, SystemImageGUID: ca2, VendorID: 0x2c9, DeviceID: 0x1021, NumPorts: 2,
				Description: "dgx-a01 mlx5_1", Host: "dgx-a01", Device: "mlx5_1", Line: 45},
			ca3: {GUID: ca3, Kind: KindCA, SystemImageGUID: ca3, VendorID: 0x2c9, DeviceID: 0x1021, NumPorts: 1,
				Description: "DGX-A02 HCA-1", Host: "dgx-a02", Device: "HCA-1", Line: 52},
			ca9: {GUID: ca9, Kind: KindCA, SystemImageGUID: ca9, VendorID: 0x2c9, DeviceID: 0x101b, NumPorts: 1,
				Description: "node9", Host: "node9", Line: 59},
		},
		Links: []Link{
			{A: Endpoint{GUID: spine, Kind: KindSwitch, Port: 1, LID: 1}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 33, LID: 2}, Width: "4x", Speed: "NDR", Line: 11},
			{A: Endpoint{GUID: spine, Kind: KindSwitch, Port: 2, LID: 1}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 34, LID: 2}, Width: "4x", Speed: "NDR", Line: 12},
			{A: Endpoint{GUID: ca1, Kind: KindCA, Port: 1, PortGUID: ca1, LID: 11}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 1, LID: 2}, Width: "4x", Speed: "NDR", Line: 19},
			{A: Endpoint{GUID: ca2, Kind: KindCA, Port: 1, PortGUID: ca2, LID: 12}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 2, LID: 2}, Width: "4x", Speed: "NDR", Line: 20},
			{A: Endpoint{GUID: ca3, Kind: KindCA, Port: 1, PortGUID: ca3, LID: 13}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 3, LID: 2}, Width: "4x", Speed: "NDR", Line: 21},
			{A: Endpoint{GUID: ca9, Kind: KindCA, Port: 1, PortGUID: ca9, LID: 14}, B: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 4, LID: 2}, Width: "4x", Speed: "HDR", Line: 22},
			{A: Endpoint{GUID: leaf, Kind: KindSwitch, Port: 65, LID: 2}, B: Endpoint{GUID: an, Kind: KindCA, Port: 1, PortGUID: an, LID: 3}, Width: "4x", Speed: "NDR", Line: 25},
		},
	}
	for g, sw := range want.Switches {
		if diff := cmp.Diff(sw, f.Switches[g]); diff != "" {
			t.Errorf("switch %s (-want +got):\n%s", g, diff)
		}
	}
	for g, ca := range want.CAs {
		if diff := cmp.Diff(ca, f.CAs[g]); diff != "" {
			t.Errorf("CA %s (-want +got):\n%s", g, diff)
		}
	}
	if len(f.Switches) != len(want.Switches) || len(f.CAs) != len(want.CAs) {
		t.Errorf("got %d switches, %d CAs; want %d, %d", len(f.Switches), len(f.CAs), len(want.Switches), len(want.CAs))
	}
	if diff := cmp.Diff(want.Links, f.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}

	if got, want := f.Hosts(), []string{"dgx-a01", "dgx-a02", "node9"}; !slices.Equal(got, want) {
		t.Errorf("Hosts() = %v, want %v", got, want)
	}
	wantUp := []Uplink{
		{CA: ca1, Device: "mlx5_0", CAPort: 1, CAPortGUID: ca1, Switch: leaf, SwitchName: "ib-leaf-01", SwitchPort: 1, Width: "4x", Speed: "NDR"},
		{CA: ca2, Device: "mlx5_1", CAPort: 1, CAPortGUID: ca2, Switch: leaf, SwitchName: "ib-leaf-01", SwitchPort: 2, Width: "4x", Speed: "NDR"},
	}
	if diff := cmp.Diff(wantUp, f.HostUplinks("dgx-a01")); diff != "" {
		t.Errorf("HostUplinks(dgx-a01) (-want +got):\n%s", diff)
	}
	if got := f.HostUplinks("nope"); got != nil {
		t.Errorf("HostUplinks(nope) = %+v, want nil", got)
	}
	wantAdj := map[GUID][]GUID{spine: {leaf}, leaf: {spine}}
	if diff := cmp.Diff(wantAdj, f.SwitchAdjacency()); diff != "" {
		t.Errorf("SwitchAdjacency() (-want +got):\n%s", diff)
	}
}

func TestParseSuperPODFixture(t *testing.T) {
	f, warns := parseFile(t, superPODFixture)
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	var (
		hosts    = spu.Hosts
		switches = spu.Spines + spu.SUs()*spu.Rails
		hcas     = hosts*spu.Rails - 1 // one HCA is down, so unseen
		ans      = switches            // one SHARP aggregation node per switch
		links    = hcas + spu.SUs()*spu.Rails*spu.Spines*spu.SpineLinks + ans
	)
	if switches != 24 || hcas+ans != 279 || links != 535 {
		t.Fatalf("fixture shape changed: %d switches, %d CAs, %d links", switches, hcas+ans, links)
	}
	if len(f.Switches) != switches || len(f.CAs) != hcas+ans || len(f.Links) != links {
		t.Fatalf("got %d switches, %d CAs, %d links; want %d, %d, %d",
			len(f.Switches), len(f.CAs), len(f.Links), switches, hcas+ans, links)
	}
	if got := len(f.Hosts()); got != hosts {
		t.Errorf("%d hosts, want %d", got, hosts)
	}
	for h := 1; h <= hosts; h++ {
		name := spu.HostName(h)
		su := (h-1)/spu.HostsPerSU + 1
		up := f.HostUplinks(name)
		leaves := map[string]bool{}
		for _, u := range up {
			leaves[u.SwitchName] = true
			if u.SwitchPort != (h-1)%spu.HostsPerSU+1 || u.Width != "4x" || u.Speed != "NDR" {
				t.Errorf("%s: uplink %+v", name, u)
			}
		}
		want := spu.Rails
		if h == spu.DownHost {
			want = spu.Rails - 1
		}
		if len(up) != want || len(leaves) != want {
			t.Errorf("%s reaches %d leaves over %d links, want %d", name, len(leaves), len(up), want)
		}
		for r := 1; r <= spu.Rails; r++ {
			if down := h == spu.DownHost && r == spu.DownRail; leaves[spu.LeafName(su, r)] == down {
				t.Errorf("%s: rail %d leaf %s reached=%v", name, r, spu.LeafName(su, r), !down)
			}
		}
	}
	adj := f.SwitchAdjacency()
	if len(adj) != switches {
		t.Errorf("adjacency covers %d switches, want %d", len(adj), switches)
	}
	for g, n := range adj {
		sw := f.Switches[g]
		want := spu.Spines
		if strings.HasPrefix(sw.Name, "ib-spine-") {
			want = spu.SUs() * spu.Rails
		}
		if len(n) != want {
			t.Errorf("%s has %d switch neighbours, want %d", sw.Name, len(n), want)
		}
		for _, o := range n {
			if isSpine := strings.HasPrefix(f.Switches[o].Name, "ib-spine-"); isSpine == strings.HasPrefix(sw.Name, "ib-spine-") {
				t.Errorf("%s is adjacent to %s: not a leaf-spine pair", sw.Name, f.Switches[o].Name)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
	}{
		{"empty", ""},
		{"blank lines", "\n\n  \n"},
		{"comments only", "#\n# Topology file: generated on Tue Apr  8 09:30:12 2025\n#\n"},
		{"ports report (-p)", "SW     2     1 0xb83fd20300a10002 4x NDR - CA    11  1 0x946dae0300c20001 ( 'MF0;ib-leaf-01:MQM9700/U1' - 'dgx-a01 mlx5_0' )\n"},
		{"port line without node", "[1]\t\"H-946dae0300c20001\"[1](946dae0300c20001) \t\t# \"dgx-a01 mlx5_0\" lid 11 4xNDR\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := Parse(strings.NewReader(tc.in))
			if !errors.Is(err, ErrNoNodes) || f != nil {
				t.Fatalf("Parse = %v, %v; want nil, ErrNoNodes", f, err)
			}
		})
	}
	t.Run("garbage file", func(t *testing.T) {
		fh, err := os.Open("testdata/garbage.txt")
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, warns, err := Parse(fh); !errors.Is(err, ErrNoNodes) || len(warns) == 0 {
			t.Fatalf("Parse(garbage) = %d warnings, %v; want warnings and ErrNoNodes", len(warns), err)
		}
	})
}

// smallDoc is a two-node capture the malformed-line cases below edit.
const smallDoc = "vendid=0x2c9\n" + // 1
	"devid=0xd2f0\n" + // 2
	"switchguid=0xb83fd20300a10002(b83fd20300a10002)\n" + // 3
	"Switch\t65 \"S-b83fd20300a10002\"\t\t# \"MF0;ib-leaf-01:MQM9700/U1\" enhanced port 0 lid 2 lmc 0\n" + // 4
	"[1]\t\"H-946dae0300c20001\"[1](946dae0300c20001) \t\t# \"dgx-a01 mlx5_0\" lid 11 4xNDR\n" + // 5
	"[2]\t\"H-946dae0300c20002\"[1](946dae0300c20002) \t\t# \"dgx-a01 mlx5_1\" lid 12 4xNDR\n" + // 6
	"\n" + // 7
	"vendid=0x2c9\n" + // 8
	"devid=0x1021\n" + // 9
	"caguid=0x946dae0300c20001\n" + // 10
	"Ca\t1 \"H-946dae0300c20001\"\t\t# \"dgx-a01 mlx5_0\"\n" + // 11
	"[1](946dae0300c20001) \t\"S-b83fd20300a10002\"[1]\t\t# lid 11 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n" // 12

// withoutUnrecorded drops the warning that port lines name nodes without a record: smallDoc and the format
// snippets below are cut after the records they test, so they give it.
func withoutUnrecorded(warns []Warning) []Warning {
	return slices.DeleteFunc(slices.Clone(warns), func(w Warning) bool {
		return w.Partial && strings.HasPrefix(w.Reason, "port lines name ")
	})
}

// replaceLine swaps line n (1-based) of doc.
func replaceLine(doc string, n int, with string) string {
	lines := strings.Split(doc, "\n")
	lines[n-1] = with
	return strings.Join(lines, "\n")
}

func TestParseMalformedLines(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         string
		wantLine   int
		wantReason string
		links      int
		cas        int // CAs including inferred ones
	}{
		{"garbage between ports", replaceLine(smallDoc, 5, "!!garbage!!"), 5, "unrecognised line", 2, 2},
		{"truncated port line", replaceLine(smallDoc, 5, "[1]\t\"H-946dae0300c2"), 5, "malformed port line", 2, 2},
		{"port zero", replaceLine(smallDoc, 6, "[0]\t\"H-946dae0300c20002\"[1](946dae0300c20002) \t\t# \"dgx-a01 mlx5_1\" lid 12 4xNDR"), 6, "bad local port number", 1, 1},
		{"port beyond count", replaceLine(smallDoc, 6, "[66]\t\"H-946dae0300c20002\"[1](946dae0300c20002) \t\t# \"dgx-a01 mlx5_1\" lid 12 4xNDR"), 6, "beyond the node's 65 ports", 1, 1},
		{"over-long GUID", replaceLine(smallDoc, 6, "[2]\t\"H-946dae0300c2000200\"[1] \t\t# \"x\" lid 12 4xNDR"), 6, "bad peer GUID", 1, 1},
		{"unknown peer type", replaceLine(smallDoc, 6, "[2]\t\"?-946dae0300c20002\"[1] \t\t# \"x\" lid 12 4xNDR"), 6, "peer of unknown node type", 1, 1},
		{"huge LID", replaceLine(smallDoc, 6, "[2]\t\"H-946dae0300c20002\"[1](946dae0300c20002) \t\t# \"dgx-a01 mlx5_1\" lid 99999999 4xNDR"), 6, "bad peer LID", 1, 1},
		{"bad vendid", replaceLine(smallDoc, 8, "vendid=0xzz"), 8, "bad vendid value", 2, 2},
		{"unknown key", replaceLine(smallDoc, 9, "colour=blue"), 9, `unknown key "colour"`, 2, 2},
		{"header GUID mismatch", replaceLine(smallDoc, 10, "caguid=0x946dae0300c29999"), 11, "header GUID differs", 2, 2},
		{"mistyped header", replaceLine(smallDoc, 11, "Ca\t1 \"S-946dae0300c20001\"\t\t# \"dgx-a01 mlx5_0\""), 11, `names a "S" node`, 2, 2},
		{"truncated header", replaceLine(smallDoc, 11, "Ca\t1 \"H-946dae03"), 11, "malformed node header", 2, 2},
		{"switch header without LID", replaceLine(smallDoc, 4, "Switch\t65 \"S-b83fd20300a10002\"\t\t# \"MF0;ib-leaf-01:MQM9700/U1\""), 4, "switch header without port 0 LID", 2, 2},
		{"conflicting link", smallDoc + "\n" +
			"caguid=0x946dae0300c20003\n" + // 14
			"Ca\t1 \"H-946dae0300c20003\"\t\t# \"dgx-a02 mlx5_0\"\n" + // 15
			"[1](946dae0300c20003) \t\"S-b83fd20300a10002\"[1]\t\t# lid 13 lmc 0 \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR\n", // 16
			16, "port b83fd20300a10002/1 is already linked to 946dae0300c20001/1 (line 5)", 2, 3},
		{"peer of the wrong type", replaceLine(smallDoc, 6, "[2]\t\"S-946dae0300c20001\"[2]\t\t# \"dgx-a01 mlx5_0\" lid 11 4xNDR"), 6, "946dae0300c20001 named as a switch but declared as a ca", 2, 1},
		{"self link", replaceLine(smallDoc, 6, "[2]\t\"S-b83fd20300a10002\"[2]\t\t# \"MF0;ib-leaf-01:MQM9700/U1\" lid 2 4xNDR"), 6, "port linked to itself", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, warns, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			warns = withoutUnrecorded(warns)
			if len(warns) != 1 || warns[0].Line != tc.wantLine || !strings.Contains(warns[0].Reason, tc.wantReason) {
				t.Fatalf("warnings = %v; want one at line %d containing %q", warns, tc.wantLine, tc.wantReason)
			}
			if len(f.Switches) != 1 || len(f.CAs) != tc.cas || len(f.Links) != tc.links {
				t.Errorf("got %d switches, %d CAs, %d links; want 1, %d, %d", len(f.Switches), len(f.CAs), len(f.Links), tc.cas, tc.links)
			}
		})
	}
}

func TestParseDeduplicatesLinks(t *testing.T) {
	// The same link reported from both ends, then again verbatim (a switch block repeated).
	in := smallDoc + "\nswitchguid=0xb83fd20300a10002\n" +
		"Switch\t65 \"S-b83fd20300a10002\"\t\t# \"MF0;ib-leaf-01:MQM9700/U1\" enhanced port 0 lid 2 lmc 0\n" +
		"[1]\t\"H-946dae0300c20001\"[1](946dae0300c20001) \t\t# \"dgx-a01 mlx5_0\" lid 11 4xNDR\n"
	f, warns, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	warns = withoutUnrecorded(warns)
	if len(warns) != 1 || !strings.Contains(warns[0].Reason, "switch declared twice") {
		t.Errorf("warnings = %v; want one about the repeated switch", warns)
	}
	if len(f.Links) != 2 {
		t.Fatalf("%d links, want 2: %+v", len(f.Links), f.Links)
	}
	want := Link{
		A: Endpoint{GUID: "946dae0300c20001", Kind: KindCA, Port: 1, PortGUID: "946dae0300c20001", LID: 11},
		B: Endpoint{GUID: "b83fd20300a10002", Kind: KindSwitch, Port: 1, LID: 2}, Width: "4x", Speed: "NDR", Line: 5,
	}
	if f.Links[0] != want {
		t.Errorf("link 0 = %+v, want %+v", f.Links[0], want)
	}
}

func TestParseFormatVariants(t *testing.T) {
	sw := GUID("b83fd20300a10002")
	ca := GUID("0002c90200267924")
	for _, tc := range []struct {
		name  string
		in    string
		width string
		speed string
		caLID int
		swLID int
	}{
		{"old release: no port GUIDs, no rate", "vendid=0x2c9\ndevid=0xb924\nsysimgguid=0xb83fd20300a10002\nswitchguid=0xb83fd20300a10002\n" +
			"Switch\t24 \"S-b83fd20300a10002\"\t\t# \"MT47396 Infiniscale-III Mellanox Technologies\" base port 0 lid 1 lmc 0\n" +
			"[24]\t\"H-0002c90200267924\"[1]\t\t# \"node24 HCA-1\" lid 18\n", "", "", 18, 1},
		{"full (-f) and CRLF", "switchguid=0xb83fd20300a10002(b83fd20300a10002)\r\n" +
			"Switch\t24 \"S-b83fd20300a10002\"\t\t# \"MF0;sw:MQM8700/U1\" enhanced port 0 lid 1 lmc 0\r\n" +
			"[24]\t\"H-0002c90200267924\"[1](2c90200267924) \t\t# \"node24 HCA-1\" lid 18 4xHDR s=64 w=2 v=4\r\n", "4x", "HDR", 18, 1},
		{"grouping (-g)", "#\n# Topology file: generated on Tue Apr  8 09:30:12 2025\n#\n\nChassis 1 (guid 0xb83fd20300a10000)\n\n# Spine Nodes\n\n" +
			"vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0xb83fd20300a10000\t\t# Chassis 1\n" +
			"switchguid=0xb83fd20300a10002(b83fd20300a10002)\t# QM9790 Spine 1 Chip 1\n" +
			"Switch\t65 \"S-b83fd20300a10002\"\t\t# \"MF0;dir-01:CS8500/S01/U1\" enhanced port 0 lid 1 lmc 0\n" +
			"[24][ext 12]\t\"H-0002c90200267924\"[1](2c90200267924) \t\t# \"node24 HCA-1\" lid 18 1xSDR\n\nNon-Chassis Nodes\n\n" +
			"vendid=0x2c9\ndevid=0x1021\ncaguid=0x2c90200267924\nCa\t1 \"H-0002c90200267924\"\t\t# \"node24 HCA-1\"\n" +
			"[1](2c90200267924) \t\"S-b83fd20300a10002\"[24][ext 12]\t\t# lid 18 lmc 0 \"MF0;dir-01:CS8500/S01/U1\" lid 1 1xSDR\n", "1x", "SDR", 18, 1},
		{"unknown rate", "switchguid=0xb83fd20300a10002\nSwitch\t24 \"S-b83fd20300a10002\"\t\t# \"s\" base port 0 lid 1 lmc 0\n" +
			"[24]\t\"H-0002c90200267924\"[1](2c90200267924) \t\t# \"node24 HCA-1\" lid 18 ?????\n", "??", "???", 18, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, warns, err := Parse(strings.NewReader(tc.in))
			if err != nil || len(withoutUnrecorded(warns)) != 0 {
				t.Fatalf("Parse: %v, warnings %v", err, warns)
			}
			if len(f.Links) != 1 {
				t.Fatalf("links = %+v", f.Links)
			}
			l := f.Links[0]
			if l.A.GUID != ca || l.A.Port != 1 || l.A.LID != tc.caLID || l.B.GUID != sw || l.B.Port != 24 || l.B.LID != tc.swLID ||
				l.Width != tc.width || l.Speed != tc.speed {
				t.Errorf("link = %+v", l)
			}
			if c := f.CAs[ca]; c == nil || c.Host != "node24" || c.Device != "HCA-1" {
				t.Errorf("CA = %+v", c)
			}
		})
	}
}

func TestParseInfersUndeclaredPeers(t *testing.T) {
	// A capture cut off after the switch block: the CAs are known only from the switch's port lines, which
	// the warning says.
	in := strings.Join(strings.Split(smallDoc, "\n")[:6], "\n")
	f, warns, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	wantWarns := []Warning{{Line: 5, Partial: true, Reason: `port lines name 2 CAs that have no record of their own (ca H-946dae0300c20001 "dgx-a01 mlx5_0" (line 5), ` +
		`ca H-946dae0300c20002 "dgx-a01 mlx5_1" (line 6)): their records are missing, the capture is partial`}}
	if diff := cmp.Diff(wantWarns, warns); diff != "" || !f.Partial {
		t.Errorf("warnings (-want +got):\n%s; Fabric.Partial = %v", diff, f.Partial)
	}
	want := &CA{GUID: "946dae0300c20002", Kind: KindCA, Description: "dgx-a01 mlx5_1", Host: "dgx-a01", Device: "mlx5_1", Inferred: true, Line: 6}
	if diff := cmp.Diff(want, f.CAs["946dae0300c20002"]); diff != "" {
		t.Errorf("inferred CA (-want +got):\n%s", diff)
	}
	if up := f.HostUplinks("dgx-a01"); len(up) != 2 {
		t.Errorf("uplinks = %+v", up)
	}
}

func TestParseWarningCap(t *testing.T) {
	in := smallDoc + strings.Repeat("junk\n", maxWarnings+5)
	f, warns, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// 5 junk lines over the cap, and the warning that smallDoc's port lines name a CA without a record.
	if len(warns) != maxWarnings+1 || warns[maxWarnings].Reason != "6 further warnings suppressed" {
		t.Errorf("%d warnings, last %v", len(warns), warns[len(warns)-1])
	}
	if !f.Partial {
		t.Error("a partial warning past the cap left the fabric not partial")
	}
}

func TestParseGUID(t *testing.T) {
	for in, want := range map[string]GUID{
		"0x2c90300a1b2c3": "0002c90300a1b2c3", "B83FD20300A10002": "b83fd20300a10002", "0X1": "0000000000000001",
		"": "", "0x": "", "12345678901234567": "", "0xg1": "", "-1": "",
	} {
		got, err := ParseGUID(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseGUID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSwitchNameModelAndHostDevice(t *testing.T) {
	for _, tc := range []struct{ desc, name, model string }{
		{"MF0;sw-leaf-01:MQM9700/U1", "sw-leaf-01", "MQM9700"},
		{"MF0;dir-01:CS8500/S01/U1", "dir-01", "CS8500"},
		{"MF0;sw:MQM8700", "sw", "MQM8700"},
		{"Quantum Mellanox Technologies", "Quantum Mellanox Technologies", ""},
		{"MF0;:MQM9700/U1", "MF0;:MQM9700/U1", ""},
		{"", "", ""},
	} {
		if n, m := SwitchNameModel(tc.desc); n != tc.name || m != tc.model {
			t.Errorf("SwitchNameModel(%q) = %q, %q; want %q, %q", tc.desc, n, m, tc.name, tc.model)
		}
	}
	for _, tc := range []struct{ desc, host, dev string }{
		{"dgx-001 mlx5_0", "dgx-001", "mlx5_0"},
		{"DGX-001 HCA-1", "dgx-001", "HCA-1"},
		{"node9", "node9", ""},
		{"Mellanox Technologies Aggregation Node", "", ""},
		{"  ", "", ""},
	} {
		if h, d := HostDevice(tc.desc); h != tc.host || d != tc.dev {
			t.Errorf("HostDevice(%q) = %q, %q; want %q, %q", tc.desc, h, d, tc.host, tc.dev)
		}
	}
}

func TestWarningString(t *testing.T) {
	w := Warning{Line: 7, Text: "[1] x", Reason: "malformed port line"}
	if got, want := w.String(), fmt.Sprintf("line 7: malformed port line: %q", "[1] x"); got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	w = Warning{Line: 19, Reason: "port lines name 1 CA that has no record of its own", Partial: true}
	if got, want := w.String(), "line 19: port lines name 1 CA that has no record of its own"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}
