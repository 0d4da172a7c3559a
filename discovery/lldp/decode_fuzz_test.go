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
	})
}

func FuzzParseLLDPCLI(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"lldpcli-single.json", "lldpcli-multi.json", "lldpcli-json0.json"} {
		seeds = append(seeds, readFixture(f, name))
	}
	seeds = append(seeds, []byte(`{"lldp":{"interface":{"eth0":{"chassis":{"id":{"value":"x"}}}}}}`))
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
		}
	})
}
