package lldp

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// realSwitchFrame is an LLDP frame laid out byte by byte the way a data-centre switch sends it: chassis MAC,
// port ifName "Ethernet1/1", TTL 120, port and system descriptions, system name, capabilities, IPv4 and
// IPv6 management addresses, 802.1 port VLAN ID, 802.3 maximum frame size and link aggregation, End, and
// padding.
var realSwitchFrame = mustHex(
	"0180c200000e" + "0c42a1aabbcc" + "88cc" + // Ethernet: nearest bridge, from the switch port, LLDP
		"0207" + "04" + "0c42a1aabbcc" + // chassis ID, subtype MAC
		"040c" + "05" + "4574686572" + "6e6574312f31" + // port ID, subtype ifName, "Ethernet1/1"
		"0602" + "0078" + // TTL 120 s
		"080d" + "746f2d676e6f6465372d703000" + // port description "to-gnode7-p0" NUL-terminated
		"0a06" + "6c6561663031" + // system name "leaf01"
		"0c11" + "417269737461204e6574776f726b73" + "0a" + "58" + // system description "Arista Networks\nX"
		"0e04" + "0014" + "0014" + // capabilities: bridge, router; enabled: bridge, router
		"100c" + "05" + "01" + "0a00000b" + "02" + "00000001" + "00" + // mgmt address IPv4 10.0.0.11, ifIndex 1
		"1018" + "11" + "02" + "fd000000000000000000000000000011" + "02" + "00000001" + "00" + // mgmt IPv6 fd00::11
		"fe06" + "0080c2" + "01" + "0064" + // 802.1 port VLAN ID 100
		"fe06" + "00120f" + "04" + "2400" + // 802.3 maximum frame size 9216
		"fe09" + "00120f" + "03" + "03" + "00000064" + // 802.3 link aggregation: capable, enabled, port 100
		"0000" + // End
		"00000000")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestDecodeRealSwitchFrame(t *testing.T) {
	n := mustDecode(t, realSwitchFrame)
	want := Neighbor{
		Source:            v1alpha1.SourceLLDP,
		ChassisID:         "0c:42:a1:aa:bb:cc",
		ChassisIDSubtype:  "mac",
		PortID:            "Ethernet1/1",
		PortIDSubtype:     "ifName",
		TTL:               120 * time.Second,
		SystemName:        "leaf01",
		SystemDescription: "Arista Networks\nX",
		PortDescription:   "to-gnode7-p0",
		ManagementAddress: "10.0.0.11",
		PortVLANID:        100,
		MaxFrameSize:      9216,
		Aggregation:       &LinkAggregation{Capable: true, Enabled: true, PortID: 100},
	}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
	wantReport := v1alpha1.LinkNeighbor{Source: v1alpha1.SourceLLDP, Interface: "ens1f0np0", ChassisID: want.ChassisID,
		ChassisIDSubtype: "mac", PortID: "Ethernet1/1", PortIDSubtype: "ifName", SystemName: "leaf01",
		PortDescription: "to-gnode7-p0", SystemDescription: "Arista Networks\nX", ManagementAddress: "10.0.0.11",
		PortVLANID: 100, MaxFrameSize: 9216, LinkAggregation: &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 100}}
	if diff := cmp.Diff(wantReport, n.LinkNeighbor("ens1f0np0")); diff != "" {
		t.Errorf("LinkNeighbor (-want +got):\n%s", diff)
	}
}

func TestDecodeChassisSubtypes(t *testing.T) {
	for _, tc := range []struct {
		subtype byte
		id      []byte
		want    string
		name    string
		warns   bool
	}{
		{1, []byte("chassis-7"), "chassis-7", "chassisComponent", false},
		{2, []byte("core-a"), "core-a", "ifAlias", false},
		{3, []byte("slot 3"), "slot 3", "portComponent", false},
		{4, []byte{0xaa, 0xbb, 0xcc, 0x00, 0x11, 0x22}, "aa:bb:cc:00:11:22", "mac", false},
		{4, []byte{0xaa, 0xbb}, "aabb", "mac", true},
		{5, []byte{1, 192, 0, 2, 1}, "192.0.2.1", "networkAddress", false},
		{5, append([]byte{2}, mustHex("20010db8000000000000000000000001")...), "2001:db8::1", "networkAddress", false},
		{5, []byte{1, 192, 0}, "af1:c000", "networkAddress", true},
		{5, []byte{16, 'x'}, "af16:78", "networkAddress", false},
		{6, []byte("eth0"), "eth0", "ifName", false},
		{7, []byte("leaf01"), "leaf01", "local", false},
		{7, []byte{0xff, 0x00, 0x01}, "ff0001", "local", false},
		{9, []byte{0xde, 0xad}, "dead", "unknown(9)", true},
	} {
		t.Run(tc.name+"/"+tc.want, func(t *testing.T) {
			f := frame(idTLV(1, tc.subtype, tc.id...), idTLV(2, 5, 'p'), ttlTLV(120), endTLV)
			n := mustDecode(t, f)
			if n.ChassisID != tc.want || n.ChassisIDSubtype != tc.name {
				t.Errorf("chassis = %q (%s), want %q (%s)", n.ChassisID, n.ChassisIDSubtype, tc.want, tc.name)
			}
			if got := len(n.Warnings) > 0; got != tc.warns {
				t.Errorf("warnings = %q, want some: %v", n.Warnings, tc.warns)
			}
			for _, w := range n.Warnings {
				if !strings.Contains(w, "offset 14") {
					t.Errorf("warning %q does not name the chassis TLV's offset", w)
				}
			}
		})
	}
}

func TestDecodePortSubtypes(t *testing.T) {
	for _, tc := range []struct {
		subtype byte
		id      []byte
		want    string
		name    string
		warns   bool
	}{
		{1, []byte("uplink-a"), "uplink-a", "ifAlias", false},
		{2, []byte("port 12"), "port 12", "portComponent", false},
		{3, []byte{0x0c, 0x42, 0xa1, 0, 0, 9}, "0c:42:a1:00:00:09", "mac", false},
		{4, []byte{1, 10, 1, 2, 3}, "10.1.2.3", "networkAddress", false},
		{5, []byte("Ethernet1/1"), "Ethernet1/1", "ifName", false},
		{6, []byte("circuit-9"), "circuit-9", "agentCircuitID", false},
		{6, []byte{0x01, 0x02}, "0102", "agentCircuitID", false},
		{7, []byte("37"), "37", "local", false},
		{0xff, []byte{0x01}, "01", "unknown(255)", true},
	} {
		t.Run(tc.name+"/"+tc.want, func(t *testing.T) {
			f := frame(idTLV(1, 7, 's'), idTLV(2, tc.subtype, tc.id...), ttlTLV(120), endTLV)
			n := mustDecode(t, f)
			if n.PortID != tc.want || n.PortIDSubtype != tc.name {
				t.Errorf("port = %q (%s), want %q (%s)", n.PortID, n.PortIDSubtype, tc.want, tc.name)
			}
			if got := len(n.Warnings) > 0; got != tc.warns {
				t.Errorf("warnings = %q, want some: %v", n.Warnings, tc.warns)
			}
		})
	}
}

func TestDecodeManagementAddress(t *testing.T) {
	v6 := mustHex("fd000000000000000000000000000011")
	for _, tc := range []struct {
		name  string
		tlvs  [][]byte
		want  string
		warns bool
	}{
		{"IPv4", [][]byte{mgmtTLV(1, 10, 0, 0, 11)}, "10.0.0.11", false},
		{"IPv6", [][]byte{mgmtTLV(2, v6...)}, "fd00::11", false},
		{"IPv4 preferred over IPv6", [][]byte{mgmtTLV(2, v6...), mgmtTLV(1, 10, 0, 0, 11)}, "10.0.0.11", false},
		{"802 MAC", [][]byte{mgmtTLV(6, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff)}, "aa:bb:cc:dd:ee:ff", false},
		{"other family", [][]byte{mgmtTLV(16, []byte("sw.example")...)}, "af16:73772e6578616d706c65", false},
		{"IPv4 of wrong length", [][]byte{mgmtTLV(1, 10, 0, 0)}, "af1:0a0000", true},
		// gopacket slices v[2:1] for an address string length of 0 and overflows a byte for lengths near 255.
		{"address string length 0", [][]byte{rawTLV(8, 0, 1, 10, 0, 0, 11, 2, 0, 0, 0, 1, 0)}, "", true},
		{"address string length 250", [][]byte{rawTLV(8, 250, 1, 10, 0, 0, 11, 2, 0, 0, 0, 1, 0)}, "", true},
		{"OID past the end", [][]byte{rawTLV(8, 5, 1, 10, 0, 0, 11, 2, 0, 0, 0, 1, 9, 1)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := mustDecode(t, frameWith(tc.tlvs...))
			if n.ManagementAddress != tc.want {
				t.Errorf("ManagementAddress = %q, want %q", n.ManagementAddress, tc.want)
			}
			if got := len(n.Warnings) > 0; got != tc.warns {
				t.Errorf("warnings = %q, want some: %v", n.Warnings, tc.warns)
			}
		})
	}
}

func TestDecodeTTLZero(t *testing.T) {
	n := mustDecode(t, frame(idTLV(1, 7, 's'), idTLV(2, 5, 'p'), ttlTLV(0), endTLV))
	if n.TTL != 0 {
		t.Errorf("TTL = %v, want 0", n.TTL)
	}
}

func TestDecodeErrors(t *testing.T) {
	chassis, port, ttl := mandatory()[0], mandatory()[1], mandatory()[2]
	tagged := append(append(append([]byte{}, NearestBridge...), testSrcMAC...), 0x81, 0x00, 0x00)
	for _, tc := range []struct {
		name   string
		frame  []byte
		target error
		where  string
	}{
		{"empty", nil, ErrTruncated, "Ethernet header"},
		{"short Ethernet header", frame()[:10], ErrTruncated, "Ethernet header"},
		{"IPv4 frame", append(frame()[:12], 0x08, 0x00, 0x45), ErrNotLLDP, "0x0800"},
		{"truncated 802.1Q tag", tagged, ErrTruncated, "offset 14"},
		{"no TLV", frame(), ErrMissingTLV, "chassis ID"},
		{"TLV header cut", frame(chassis, port, ttl, []byte{0x02}), ErrTruncated, "offset 34"},
		{"TLV value cut", frame(chassis, port, ttl, textTLV(5, "leaf01")[:5]), ErrTruncated, "System Name TLV at offset 34"},
		{"TLV value cut in the chassis", frame(chassis[:6]), ErrTruncated, "Chassis ID TLV at offset 14"},
		{"no chassis", frame(port, ttl, endTLV), ErrMissingTLV, "chassis ID"},
		{"no port", frame(chassis, ttl, endTLV), ErrMissingTLV, "port ID"},
		{"no TTL", frame(chassis, port, endTLV), ErrMissingTLV, "TTL"},
		{"End before TTL", frame(chassis, port, endTLV, ttl), ErrMissingTLV, "TTL"},
		{"empty chassis ID", frame(idTLV(1, 4), port, ttl, endTLV), ErrMalformedTLV, "Chassis ID TLV at offset 14"},
		{"reserved port subtype 0", frame(chassis, idTLV(2, 0, 'x'), ttl, endTLV), ErrMalformedTLV, "Port ID TLV at offset 23"},
		{"short TTL", frame(chassis, port, rawTLV(3, 1), endTLV), ErrMalformedTLV, "TTL TLV at offset 30"},
		{"duplicate chassis", frame(chassis, port, ttl, chassis, endTLV), ErrMalformedTLV, "first at offset 14"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.frame)
			if !errors.Is(err, tc.target) {
				t.Fatalf("Decode error = %v, want %v", err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("error %q does not say %q", err, tc.where)
			}
		})
	}
}

func TestDecodeLenientCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		warns []string
	}{
		{"no End TLV", frame(mandatory()...), nil},
		{"802.1Q tagged", func() []byte {
			f := frameWith()
			return append(append(append([]byte{}, f[:12]...), 0x81, 0x00, 0x00, 0x64), f[12:]...)
		}(), nil},
		{"short capabilities", frameWith(rawTLV(7, 0, 4)), []string{"System Capabilities TLV at offset 34: 2 bytes, want 4; ignored"}},
		{"short org TLV", frameWith(rawTLV(127, 0, 0x80)), []string{"Organisation Specific TLV at offset 34: 2 bytes, shorter than the OUI and subtype; ignored"}},
		{"short 802.1 PVID", frameWith(orgTLV(0x0080c2, 1, 0)), []string{"Organisation Specific TLV at offset 34: 802.1 port VLAN ID: Invalid Org Specific TLV 1 length 1 (wanted minimum 2); ignored"}},
		{"unknown TLV type", frameWith(rawTLV(42, 1, 2, 3)), nil},
		{"mandatory TLV late", frame(idTLV(1, 7, 's'), textTLV(5, "x"), idTLV(2, 5, 'p'), ttlTLV(1), endTLV), []string{"Port ID TLV at offset 21: mandatory TLV after optional ones", "TTL TLV at offset 25: mandatory TLV after optional ones"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := mustDecode(t, tc.frame)
			if !slices.Equal(n.Warnings, tc.warns) {
				t.Errorf("warnings = %q, want %q", n.Warnings, tc.warns)
			}
		})
	}
}

func TestDecodeCleansText(t *testing.T) {
	n := mustDecode(t, frameWith(textTLV(5, "leaf\x0701\x00"), textTLV(6, "line1\nline2\xff")))
	if n.SystemName != "leaf01" {
		t.Errorf("SystemName = %q", n.SystemName)
	}
	if n.SystemDescription != "line1\nline2\uFFFD" {
		t.Errorf("SystemDescription = %q", n.SystemDescription)
	}
}

func TestLinkNeighborTruncates(t *testing.T) {
	n := Neighbor{ChassisID: strings.Repeat("é", 200), PortID: "p", SystemDescription: strings.Repeat("x", 600)}
	ln := n.LinkNeighbor(strings.Repeat("i", 70))
	if len(ln.ChassisID) != 254 || len(ln.SystemDescription) != 512 || len(ln.Interface) != 64 {
		t.Errorf("lengths %d/%d/%d, want 254/512/64", len(ln.ChassisID), len(ln.SystemDescription), len(ln.Interface))
	}
	if ln.Source != v1alpha1.SourceLLDP {
		t.Errorf("Source = %q, want lldp by default", ln.Source)
	}
}

// The 802.1 and 802.3 TLVs a switch announces about its port reach the report's neighbour: port VLAN ID,
// maximum frame size, link aggregation. What the report's schema cannot hold (a VLAN ID above 4094) is left
// out with a warning, never sent to be refused with the whole report.
func TestDecodeOrgTLVsToReport(t *testing.T) {
	base := v1alpha1.LinkNeighbor{Source: v1alpha1.SourceLLDP, Interface: "eth0", ChassisID: "0c:42:a1:00:00:01",
		ChassisIDSubtype: "mac", PortID: "swp1", PortIDSubtype: "ifName"}
	with := func(edit func(*v1alpha1.LinkNeighbor)) v1alpha1.LinkNeighbor {
		n := base
		edit(&n)
		return n
	}
	for _, tc := range []struct {
		name     string
		tlvs     [][]byte
		want     v1alpha1.LinkNeighbor
		warnings []string
	}{
		{name: "none announced", want: base},
		{name: "PVID, jumbo frames, an enabled 802.3 aggregation",
			tlvs: [][]byte{orgTLV(0x0080c2, 1, 0x00, 0x64), orgTLV(0x00120f, 4, 0x24, 0x00), orgTLV(0x00120f, 3, 0x03, 0, 0, 0x27, 0x10)},
			want: with(func(n *v1alpha1.LinkNeighbor) {
				n.PortVLANID, n.MaxFrameSize = 100, 9216
				n.LinkAggregation = &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 10000}
			})},
		{name: "802.1 aggregation, capable but not aggregated", tlvs: [][]byte{orgTLV(0x0080c2, 7, 0x01, 0, 0, 0, 0)},
			want: with(func(n *v1alpha1.LinkNeighbor) { n.LinkAggregation = &v1alpha1.LinkAggregation{Capable: true} })},
		{name: "the largest aggregate ID", tlvs: [][]byte{orgTLV(0x00120f, 3, 0x03, 0xff, 0xff, 0xff, 0xff)},
			want: with(func(n *v1alpha1.LinkNeighbor) {
				n.LinkAggregation = &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 4294967295}
			})},
		{name: "standard frames, VLAN 4094", tlvs: [][]byte{orgTLV(0x00120f, 4, 0x05, 0xee), orgTLV(0x0080c2, 1, 0x0f, 0xfe)},
			want: with(func(n *v1alpha1.LinkNeighbor) { n.MaxFrameSize, n.PortVLANID = 1518, 4094 })},
		{name: "PVID 0: the port has none", tlvs: [][]byte{orgTLV(0x0080c2, 1, 0, 0)}, want: base},
		{name: "PVID 4095, reserved", tlvs: [][]byte{orgTLV(0x0080c2, 1, 0x0f, 0xff), orgTLV(0x00120f, 4, 0x24, 0x00)},
			want:     with(func(n *v1alpha1.LinkNeighbor) { n.MaxFrameSize = 9216 }),
			warnings: []string{"Organisation Specific TLV at offset 34: 802.1 port VLAN ID 4095 outside 1..4094; ignored"}},
		{name: "a short 802.3 aggregation beside a good PVID", tlvs: [][]byte{orgTLV(0x00120f, 3, 0x03, 0, 0), orgTLV(0x0080c2, 1, 0, 10)},
			want: with(func(n *v1alpha1.LinkNeighbor) { n.PortVLANID = 10 }),
			warnings: []string{"Organisation Specific TLV at offset 34: 802.3 link aggregation: " +
				"Invalid Org Specific TLV 3 length 3 (wanted minimum 5); ignored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := mustDecode(t, frameWith(tc.tlvs...))
			n.TTL = 0
			if diff := cmp.Diff(tc.want, n.LinkNeighbor("eth0")); diff != "" {
				t.Errorf("report neighbour (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, n.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// LLDP-MED TLVs (TIA-1057, OUI 00-12-BB) are not reported, but a malformed one is a warning naming the TLV and
// what is wrong; the rest of the frame is decoded as usual.
func TestDecodeMEDWarnings(t *testing.T) {
	const at = "Organisation Specific TLV at offset 34: "
	med := func(subtype byte, info ...byte) []byte { return orgTLV(0x0012bb, subtype, info...) }
	coordinate := append([]byte{1}, make([]byte, 16)...)
	civic := []byte{2, 6, 2, 'D', 'E', 3, 1, 'B'} // LCI length 6: what, country DE, CA type 3 "B"
	for _, tc := range []struct {
		name    string
		tlv     []byte
		warning string // empty: none
	}{
		{"capabilities", med(1, 0x00, 0x33, 4), ""},
		{"network policy", med(2, 1, 0x80, 0xc8, 0x2e), ""},
		{"coordinate location", med(3, coordinate...), ""},
		{"civic address location", med(3, civic...), ""},
		{"ELIN location", med(3, append([]byte{3}, "0123456789"...)...), ""},
		{"extended power", med(4, 0x51, 0x00, 0x82), ""},
		{"firmware revision", med(6, []byte("4.2.1")...), ""},
		{"model", med(10, []byte("SN5600")...), ""},
		{"reserved subtype 0", med(0), "LLDP-MED: reserved subtype 0; ignored"},
		{"unknown subtype 12", med(12, 1), "LLDP-MED: reserved subtype 12; ignored"},
		{"short capabilities", med(1, 0x00, 0x33), "LLDP-MED Media Capabilities: Invalid Org Specific TLV 1 length 2 (wanted minimum 3); ignored"},
		{"long capabilities", med(1, 0x00, 0x33, 4, 0), "LLDP-MED Media Capabilities: 4 bytes, want 3; ignored"},
		{"short network policy", med(2, 1, 0x80, 0xc8), "LLDP-MED Network Policy: Invalid Org Specific TLV 2 length 3 (wanted minimum 4); ignored"},
		{"long network policy", med(2, 1, 0x80, 0xc8, 0x2e, 0), "LLDP-MED Network Policy: 5 bytes, want 4; ignored"},
		{"empty location", med(3), "LLDP-MED Location Identification: Invalid Org Specific TLV 3 length 0 (wanted minimum 1); ignored"},
		{"short coordinate", med(3, coordinate[:12]...), "LLDP-MED Location Identification: Invalid Org Specific TLV 3 length 11 (wanted minimum 16); ignored"},
		{"long coordinate", med(3, append(coordinate, 0)...), "LLDP-MED Location Identification: coordinate LCI of 17 bytes, want 16; ignored"},
		{"civic LCI length past the TLV", med(3, 2, 9, 2, 'D', 'E', 3, 1, 'B'), "LLDP-MED Location Identification: civic address LCI length 9, but 6 bytes follow; ignored"},
		{"short ELIN", med(3, append([]byte{3}, "911"...)...), "LLDP-MED Location Identification: ELIN of 3 digits, want 10 to 25; ignored"},
		{"location format 0", med(3, 0, 1, 2), "LLDP-MED Location Identification: location data format 0, want 1 (coordinate), 2 (civic address) or 3 (ELIN); ignored"},
		{"location format 4", med(3, 4), "LLDP-MED Location Identification: location data format 4, want 1 (coordinate), 2 (civic address) or 3 (ELIN); ignored"},
		{"short power", med(4, 0x51), "LLDP-MED Extended Power-via-MDI: Invalid Org Specific TLV 4 length 1 (wanted minimum 3); ignored"},
		{"long serial number", med(8, []byte(strings.Repeat("7", 33))...), "LLDP-MED Serial Number: 33 bytes, want at most 32; ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := mustDecode(t, frameWith(tc.tlv, orgTLV(0x0080c2, 1, 0, 100), textTLV(5, "leaf01")))
			var want []string
			if tc.warning != "" {
				want = []string{at + tc.warning}
			}
			if diff := cmp.Diff(want, n.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if n.PortVLANID != 100 || n.SystemName != "leaf01" {
				t.Errorf("the TLVs after the LLDP-MED one were lost: PVID %d, system name %q", n.PortVLANID, n.SystemName)
			}
		})
	}
}
