package lldp

import (
	"testing"
	"unicode/utf8"
)

// withTruncations returns seeds and, for each, its prefixes cut every stride bytes.
func withTruncations(stride int, seeds ...[]byte) [][]byte {
	var out [][]byte
	for _, s := range seeds {
		out = append(out, s)
		for cut := 1; cut < len(s); cut += stride {
			out = append(out, s[:cut])
		}
	}
	return out
}

func FuzzDecode(f *testing.F) {
	seeds := [][]byte{
		realSwitchFrame,
		frameWith(mgmtTLV(2, make([]byte, 16)...), orgTLV(0x0080c2, 7, 3, 0, 0, 0, 9), orgTLV(0x00120f, 2, 1, 2, 3, 4, 5, 6, 7)),
		frame(idTLV(1, 9, 1), idTLV(2, 0xff, 2), ttlTLV(0), endTLV),
		// The port TLVs the report carries, at their bounds: PVID 4094 and the reserved 4095, the largest
		// frame size, an aggregate ID of 2^32-1 (802.1 and 802.3).
		frameWith(orgTLV(0x0080c2, 1, 0x0f, 0xfe), orgTLV(0x00120f, 4, 0xff, 0xff), orgTLV(0x0080c2, 7, 0x03, 0xff, 0xff, 0xff, 0xff)),
		frameWith(orgTLV(0x0080c2, 1, 0x0f, 0xff), orgTLV(0x00120f, 3, 0x01, 0, 0, 0, 1)),
		// LLDP-MED TLVs, well formed (capabilities, network policy, coordinate, civic and ELIN locations,
		// power, an inventory string) and not (short, long, a bad location format, a civic LCI length past
		// the TLV, a reserved subtype).
		frameWith(orgTLV(0x0012bb, 1, 0x00, 0x33, 4), orgTLV(0x0012bb, 2, 1, 0x80, 0xc8, 0x2e),
			orgTLV(0x0012bb, 3, append([]byte{1}, make([]byte, 16)...)...), orgTLV(0x0012bb, 3, 2, 6, 2, 'D', 'E', 3, 1, 'B'),
			orgTLV(0x0012bb, 3, append([]byte{3}, "0123456789"...)...), orgTLV(0x0012bb, 4, 0x51, 0x00, 0x82),
			orgTLV(0x0012bb, 10, []byte("SN5600")...)),
		frameWith(orgTLV(0x0012bb, 1, 0x00), orgTLV(0x0012bb, 2, 1, 0x80, 0xc8, 0x2e, 0), orgTLV(0x0012bb, 3, 7, 1),
			orgTLV(0x0012bb, 3, 2, 200, 2, 'D', 'E'), orgTLV(0x0012bb, 3, 1, 0, 0), orgTLV(0x0012bb, 0)),
	}
	for _, c := range switchesFixture(f) {
		seeds = append(seeds, c.Data)
	}
	for _, s := range withTruncations(5, seeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Decode(data)
		if err != nil {
			return
		}
		if n.ChassisID == "" || n.PortID == "" || n.ChassisIDSubtype == "" || n.PortIDSubtype == "" {
			t.Fatalf("decoded a neighbour without identity: %+v", n)
		}
		ln := n.LinkNeighbor("eth0")
		for _, s := range []string{ln.ChassisID, ln.PortID, ln.SystemName, ln.SystemDescription, ln.PortDescription, ln.ManagementAddress} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 in %+v", ln)
			}
		}
		// Within the report's schema (the CRD's bounds), so that no frame has the whole report refused.
		if ln.PortVLANID < 0 || ln.PortVLANID > 4094 || ln.MaxFrameSize < 0 || ln.MaxFrameSize > 65535 ||
			(ln.LinkAggregation != nil && (ln.LinkAggregation.PortID < 0 || ln.LinkAggregation.PortID > 4294967295)) {
			t.Fatalf("a port field outside the report's bounds: %+v", ln)
		}
	})
}

func FuzzParseLLDPCLI(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"lldpcli-single.json", "lldpcli-multi.json", "lldpcli-json0.json"} {
		seeds = append(seeds, readFixture(f, name))
	}
	seeds = append(seeds, []byte(`{"lldp":{"interface":{"eth0":{"chassis":{"id":{"value":"x"}}}}}}`),
		[]byte(`{"lldp":{"interface":{"eth0":{"chassis":{"id":{"value":"x"}},"port":{"mfs":"65535","aggregation":"4294967295"},`+
			`"vlan":[{"vlan-id":"4095","pvid":true},{"vlan-id":"7","pvid":true}]}}}}`))
	for _, s := range withTruncations(97, seeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sightings, _, err := ParseLLDPCLI(data)
		if err != nil {
			return
		}
		for _, s := range sightings {
			if s.Neighbor.ChassisID == "" {
				t.Fatalf("sighting without chassis ID: %+v", s)
			}
			if ln := s.Neighbor.LinkNeighbor(s.Interface); ln.PortVLANID > 4094 {
				t.Fatalf("a port VLAN ID outside the report's bounds: %+v", ln)
			}
		}
	})
}
