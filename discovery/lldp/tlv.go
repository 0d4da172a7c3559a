package lldp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gopacket/gopacket/layers"
)

// Errors a frame can be rejected with; Decode wraps them with where in the frame the problem is.
var (
	// ErrNotLLDP means the frame is not an LLDP frame (ethertype other than 0x88cc).
	ErrNotLLDP = errors.New("not an LLDP frame")
	// ErrTruncated means a header or TLV runs past the end of the frame.
	ErrTruncated = errors.New("truncated")
	// ErrMissingTLV means one of the mandatory chassis ID, port ID and TTL TLVs is absent.
	ErrMissingTLV = errors.New("missing mandatory TLV")
	// ErrMalformedTLV means a mandatory TLV is present but unusable.
	ErrMalformedTLV = errors.New("malformed TLV")
)

// tlv is one TLV of an LLDPDU.
type tlv struct {
	typ layers.LLDPTLVType
	// offset is where the TLV header starts, counted from the start of the frame.
	offset int
	value  []byte
}

func (t tlv) String() string {
	name := t.typ.String()
	if name == "Unknown" {
		name = fmt.Sprintf("type %d", t.typ)
	}
	return fmt.Sprintf("%s TLV at offset %d", name, t.offset)
}

// Minimum value lengths of the TLVs the decoder relies on.
const (
	minIDValueLen      = 2 // subtype and at least one ID byte
	ttlValueLen        = 2
	sysCapValueLen     = 4
	orgHeaderLen       = 4 // OUI and subtype
	minMgmtValueLen    = 9 // address string length, family, 1 address byte, interface subtype and number, OID length
	maxMgmtAddrStrLen  = 32
	mgmtInterfaceBytes = 5 // interface numbering subtype and number
)

// splitTLVs cuts an LLDPDU into its TLVs, stopping at the End TLV. base is the LLDPDU's offset in the frame,
// used in errors. A missing End TLV is tolerated when the last TLV ends exactly at the end of the data.
func splitTLVs(lldpdu []byte, base int) ([]tlv, error) {
	var tlvs []tlv
	for off := 0; off < len(lldpdu); {
		if len(lldpdu)-off < 2 {
			return nil, fmt.Errorf("TLV header at offset %d: %w (1 byte left)", base+off, ErrTruncated)
		}
		header := binary.BigEndian.Uint16(lldpdu[off:])
		t := tlv{typ: layers.LLDPTLVType(header >> 9), offset: base + off}
		length := int(header & 0x1ff)
		if t.typ == layers.LLDPTLVEnd {
			return tlvs, nil
		}
		if rest := len(lldpdu) - off - 2; length > rest {
			return nil, fmt.Errorf("%s: %w (length %d, %d bytes left)", t, ErrTruncated, length, rest)
		}
		t.value = lldpdu[off+2 : off+2+length]
		tlvs = append(tlvs, t)
		off += 2 + length
	}
	return tlvs, nil
}

// mandatoryTLVs are the three TLVs every LLDPDU must carry.
type mandatoryTLVs struct {
	chassis, port, ttl tlv
}

// checkTLVs validates the TLVs of an LLDPDU. It fails when a mandatory TLV is missing, duplicated or
// malformed; a malformed optional TLV is dropped with a warning, since gopacket would reject (or panic on)
// the whole LLDPDU for it. Of several management addresses only the preferred one (the first IPv4, else the
// first) is kept.
func checkTLVs(tlvs []tlv) (mandatory mandatoryTLVs, optional []tlv, warnings []string, err error) {
	slots := map[layers.LLDPTLVType]*tlv{
		layers.LLDPTLVChassisID: &mandatory.chassis,
		layers.LLDPTLVPortID:    &mandatory.port,
		layers.LLDPTLVTTL:       &mandatory.ttl,
	}
	minLen := map[layers.LLDPTLVType]int{
		layers.LLDPTLVChassisID: minIDValueLen,
		layers.LLDPTLVPortID:    minIDValueLen,
		layers.LLDPTLVTTL:       ttlValueLen,
	}
	var (
		mgmt         []tlv
		seenOptional bool
	)
	for _, t := range tlvs {
		if slot, ok := slots[t.typ]; ok {
			switch {
			case slot.value != nil:
				return mandatory, nil, nil, fmt.Errorf("%s: %w: duplicate, first at offset %d", t, ErrMalformedTLV, slot.offset)
			case len(t.value) < minLen[t.typ]:
				return mandatory, nil, nil, fmt.Errorf("%s: %w: %d bytes, want at least %d", t, ErrMalformedTLV, len(t.value), minLen[t.typ])
			case t.typ != layers.LLDPTLVTTL && t.value[0] == 0:
				return mandatory, nil, nil, fmt.Errorf("%s: %w: reserved subtype 0", t, ErrMalformedTLV)
			}
			*slot = t
			if seenOptional {
				warnings = append(warnings, fmt.Sprintf("%s: mandatory TLV after optional ones", t))
			}
			continue
		}
		seenOptional = true
		if problem := optionalTLVProblem(t); problem != "" {
			warnings = append(warnings, fmt.Sprintf("%s: %s; ignored", t, problem))
			continue
		}
		if t.typ == layers.LLDPTLVMgmtAddress {
			mgmt = append(mgmt, t)
			continue
		}
		optional = append(optional, t)
	}
	for _, m := range []struct {
		t    tlv
		name string
	}{{mandatory.chassis, "chassis ID"}, {mandatory.port, "port ID"}, {mandatory.ttl, "TTL"}} {
		if m.t.value == nil {
			return mandatory, nil, nil, fmt.Errorf("%w: no %s TLV", ErrMissingTLV, m.name)
		}
	}
	if preferred, ok := preferredMgmt(mgmt); ok {
		optional = append(optional, preferred)
	}
	return mandatory, optional, warnings, nil
}

// optionalTLVProblem says what is wrong with an optional TLV gopacket would choke on, or "" when it is fine.
func optionalTLVProblem(t tlv) string {
	switch t.typ {
	case layers.LLDPTLVSysCapabilities:
		if len(t.value) < sysCapValueLen {
			return fmt.Sprintf("%d bytes, want %d", len(t.value), sysCapValueLen)
		}
	case layers.LLDPTLVOrgSpecific:
		if len(t.value) < orgHeaderLen {
			return fmt.Sprintf("%d bytes, shorter than the OUI and subtype", len(t.value))
		}
	case layers.LLDPTLVMgmtAddress:
		return mgmtProblem(t.value)
	}
	return ""
}

// mgmtProblem checks the nested lengths of a management address TLV (IEEE 802.1AB 8.5.9).
func mgmtProblem(v []byte) string {
	if len(v) < minMgmtValueLen {
		return fmt.Sprintf("%d bytes, want at least %d", len(v), minMgmtValueLen)
	}
	addrLen := int(v[0]) // counts the family byte too
	if addrLen < 2 || addrLen > maxMgmtAddrStrLen {
		return fmt.Sprintf("address string length %d outside 2..%d", addrLen, maxMgmtAddrStrLen)
	}
	oidLenAt := 1 + addrLen + mgmtInterfaceBytes
	if oidLenAt >= len(v) {
		return fmt.Sprintf("address string length %d leaves no room for the interface number", addrLen)
	}
	if end := oidLenAt + 1 + int(v[oidLenAt]); end > len(v) {
		return fmt.Sprintf("OID length %d runs past the TLV", v[oidLenAt])
	}
	return ""
}

// preferredMgmt picks the management address to report: the first IPv4 one, else the first.
func preferredMgmt(mgmt []tlv) (tlv, bool) {
	for _, t := range mgmt {
		if t.value[1] == familyIPv4 {
			return t, true
		}
	}
	if len(mgmt) == 0 {
		return tlv{}, false
	}
	return mgmt[0], true
}

// joinTLVs serializes the mandatory TLVs, then the optional ones, then an End TLV: a well-formed LLDPDU.
func joinTLVs(mandatory mandatoryTLVs, optional []tlv) []byte {
	all := append([]tlv{mandatory.chassis, mandatory.port, mandatory.ttl}, optional...)
	var out []byte
	for _, t := range all {
		out = binary.BigEndian.AppendUint16(out, uint16(t.typ)<<9|uint16(len(t.value)))
		out = append(out, t.value...)
	}
	return append(out, 0, 0)
}
