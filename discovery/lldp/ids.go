package lldp

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// idKind says how the bytes of a chassis or port ID of some subtype are rendered.
type idKind int

const (
	idText           idKind = iota // a name; hex when unprintable
	idMAC                          // a 6-byte MAC address
	idNetworkAddress               // an IANA address family byte followed by the address
)

// idSubtype describes one chassis or port ID subtype of IEEE 802.1AB.
type idSubtype struct {
	name string
	kind idKind
}

// chassisSubtypes are the chassis ID subtypes of IEEE 802.1AB (9.5.2.2); 0 and 8–255 are reserved.
var chassisSubtypes = map[byte]idSubtype{
	1: {"chassisComponent", idText},
	2: {"ifAlias", idText},
	3: {"portComponent", idText},
	4: {"mac", idMAC},
	5: {"networkAddress", idNetworkAddress},
	6: {"ifName", idText},
	7: {"local", idText},
}

// portSubtypes are the port ID subtypes of IEEE 802.1AB (9.5.3.2); 0 and 8–255 are reserved.
var portSubtypes = map[byte]idSubtype{
	1: {"ifAlias", idText},
	2: {"portComponent", idText},
	3: {"mac", idMAC},
	4: {"networkAddress", idNetworkAddress},
	5: {"ifName", idText},
	6: {"agentCircuitID", idText},
	7: {"local", idText},
}

// IANA address families (RFC 3232 registry) that the decoder renders natively.
const (
	familyIPv4 = 1
	familyIPv6 = 2
	family802  = 6
)

// renderID renders a chassis or port ID of the given subtype. An unknown subtype or an ID whose bytes do not
// fit its subtype is rendered as hex and explained by a non-empty warning.
func renderID(subtypes map[byte]idSubtype, subtype byte, id []byte) (value, name, warning string) {
	st, known := subtypes[subtype]
	if !known {
		return hex.EncodeToString(id), fmt.Sprintf("unknown(%d)", subtype),
			fmt.Sprintf("unknown subtype %d, ID kept as hex", subtype)
	}
	switch st.kind {
	case idMAC:
		if len(id) != 6 {
			return hex.EncodeToString(id), st.name, fmt.Sprintf("%s ID of %d bytes, want 6; kept as hex", st.name, len(id))
		}
		return net.HardwareAddr(id).String(), st.name, ""
	case idNetworkAddress:
		if len(id) < 2 {
			return hex.EncodeToString(id), st.name, "network address ID without an address; kept as hex"
		}
		value, warning = renderAddress(id[0], id[1:])
		return value, st.name, warning
	default:
		return renderText(id), st.name, ""
	}
}

// renderAddress renders an address of an IANA address family: IPv4 and IPv6 as IPs, 802 as a MAC, any other
// family as "af<family>:<hex>". A non-empty warning says the address length does not fit its family.
func renderAddress(family byte, addr []byte) (value, warning string) {
	other := fmt.Sprintf("af%d:%s", family, hex.EncodeToString(addr))
	want := map[byte]int{familyIPv4: 4, familyIPv6: 16, family802: 6}[family]
	switch {
	case want == 0:
		return other, ""
	case len(addr) != want:
		return other, fmt.Sprintf("address family %d with %d bytes, want %d; kept as hex", family, len(addr), want)
	case family == family802:
		return net.HardwareAddr(addr).String(), ""
	default:
		ip, _ := netip.AddrFromSlice(addr)
		return ip.String(), ""
	}
}

// renderText renders bytes announced as a name: as text when they are printable UTF-8 (trailing NULs, which
// some agents send, are dropped), otherwise (or when nothing is left) as hex.
func renderText(b []byte) string {
	s := strings.TrimRight(string(b), "\x00")
	if s == "" || !printable(s) {
		return hex.EncodeToString(b)
	}
	return s
}

// printable reports whether s is valid UTF-8 made only of printable characters and spaces.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// cleanText turns a free-text TLV (names and descriptions) into a valid UTF-8 string without control
// characters other than newlines and tabs, which system descriptions often contain.
func cleanText(b []byte) string {
	s := strings.ToValidUTF8(strings.TrimRight(string(b), "\x00"), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
}
