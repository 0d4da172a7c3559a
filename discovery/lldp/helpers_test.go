package lldp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
)

// Hand-built TLVs and frames for tests.

var testSrcMAC = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}

// rawTLV encodes one TLV with the given type and value.
func rawTLV(typ byte, value ...byte) []byte {
	out := binary.BigEndian.AppendUint16(nil, uint16(typ)<<9|uint16(len(value)))
	return append(out, value...)
}

func idTLV(typ, subtype byte, id ...byte) []byte {
	return rawTLV(typ, append([]byte{subtype}, id...)...)
}

func ttlTLV(seconds uint16) []byte { return rawTLV(3, byte(seconds>>8), byte(seconds)) }

func textTLV(typ byte, s string) []byte { return rawTLV(typ, []byte(s)...) }

// mgmtTLV encodes a management address TLV with ifIndex numbering and no OID.
func mgmtTLV(family byte, addr ...byte) []byte {
	v := append([]byte{byte(1 + len(addr)), family}, addr...)
	v = append(v, 2, 0, 0, 0, 1, 0)
	return rawTLV(8, v...)
}

func orgTLV(oui uint32, subtype byte, info ...byte) []byte {
	return rawTLV(127, append([]byte{byte(oui >> 16), byte(oui >> 8), byte(oui), subtype}, info...)...)
}

var endTLV = []byte{0, 0}

// mandatory returns a valid chassis (MAC), port (ifName "swp1") and TTL (120) TLVs.
func mandatory() [][]byte {
	return [][]byte{
		idTLV(1, 4, 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x01),
		idTLV(2, 5, []byte("swp1")...),
		ttlTLV(120),
	}
}

// frame wraps TLVs into an untagged LLDP Ethernet frame from testSrcMAC.
func frame(tlvs ...[]byte) []byte {
	out := append([]byte{}, NearestBridge...)
	out = append(out, testSrcMAC...)
	out = append(out, 0x88, 0xcc)
	for _, t := range tlvs {
		out = append(out, t...)
	}
	return out
}

// frameWith is a valid frame made of the mandatory TLVs, extra, and an End TLV.
func frameWith(extra ...[]byte) []byte {
	return frame(append(append(mandatory(), extra...), endTLV)...)
}

// mustDecode decodes a frame that must decode.
func mustDecode(t *testing.T, f []byte) Neighbor {
	t.Helper()
	n, err := Decode(f)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return n
}

// testAdvert is a switch port as the tests emulate it.
func testAdvert() Advert {
	return Advert{
		ChassisMAC:        net.HardwareAddr{0x0c, 0x42, 0xa1, 0x11, 0x22, 0x33},
		PortName:          "Ethernet1/1",
		SystemName:        "leaf01",
		PortDescription:   "to gpu-node-7 eth2",
		SystemDescription: "SONiC Software Version: 202405",
		ManagementIPv4:    netip.MustParseAddr("10.0.0.11"),
	}
}
