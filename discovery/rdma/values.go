package rdma

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
)

// ParseGUID parses a GUID as sysfs prints it ("946d:ae03:00f8:1a20") or as ibstat and ibnetdiscover print
// it ("0x946dae0300f81a20"). Zero is not a valid GUID.
func ParseGUID(s string) (uint64, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	if strings.Contains(h, ":") {
		groups := strings.Split(h, ":")
		if len(groups) != 4 {
			return 0, fmt.Errorf("GUID %q: want four groups of four hex digits", s)
		}
		for _, g := range groups {
			if len(g) != 4 {
				return 0, fmt.Errorf("GUID %q: want four groups of four hex digits", s)
			}
		}
		h = strings.Join(groups, "")
	} else {
		h = strings.TrimPrefix(h, "0x")
	}
	if len(h) == 0 || len(h) > 16 {
		return 0, fmt.Errorf("GUID %q: want 64 bits of hex", s)
	}
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("GUID %q: not hex", s)
	}
	if v == 0 {
		return 0, fmt.Errorf("GUID %q is zero", s)
	}
	return v, nil
}

// FormatGUID prints a GUID as "0x" and 16 lower-case hex digits; zero (unknown) prints as "".
func FormatGUID(v uint64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("0x%016x", v)
}

// parseState parses a port state file ("4: ACTIVE", "5: LinkUp") into its number and name.
func parseState(s string) (int, string, error) {
	num, name, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.Contains(name, ":") {
		return 0, "", fmt.Errorf("want \"<number>: <NAME>\"")
	}
	id, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || id < 0 {
		return 0, "", fmt.Errorf("want \"<number>: <NAME>\"")
	}
	return id, name, nil
}

// parseRate parses a port rate file ("400 Gb/sec (4X NDR)") into Gb/s and the trained width ("4X"; "" when
// the file names none).
func parseRate(s string) (float64, string, error) {
	num, rest, ok := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	if !ok || !strings.HasPrefix(rest, "Gb/sec") {
		return 0, "", fmt.Errorf("want \"<number> Gb/sec ...\"")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 1) { // also NaN
		return 0, "", fmt.Errorf("want \"<number> Gb/sec ...\"")
	}
	return v, rateWidth(strings.TrimSpace(strings.TrimPrefix(rest, "Gb/sec"))), nil
}

// rateWidth is the width a rate file names in its parentheses ("(4X NDR)" → "4X"): digits and an X, the first
// word; "" when there is none.
func rateWidth(s string) string {
	inner, ok := strings.CutPrefix(s, "(")
	if !ok {
		return ""
	}
	word, _, _ := strings.Cut(inner, " ")
	word = strings.TrimSuffix(word, ")")
	digits, ok := strings.CutSuffix(word, "X")
	if !ok || digits == "" || len(word) > 4 {
		return ""
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return word
}

// parseLID parses a LID file, which sysfs prints in hex ("0x3e").
func parseLID(s string) (uint16, error) {
	if !strings.HasPrefix(s, "0x") {
		return 0, fmt.Errorf("want a hex LID such as 0x1a")
	}
	v, err := strconv.ParseUint(s, 0, 16)
	if err != nil {
		return 0, fmt.Errorf("want a hex LID such as 0x1a")
	}
	return uint16(v), nil
}

// parseGID parses a GID as sysfs prints it: eight groups of four hex digits.
func parseGID(s string) (netip.Addr, error) {
	if strings.Count(s, ":") != 7 {
		return netip.Addr{}, fmt.Errorf("want eight groups of four hex digits")
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("want eight groups of four hex digits")
	}
	return a, nil
}

// formatGID prints a GID in the kernel's full form.
func formatGID(a netip.Addr) string {
	b := a.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%04x", binary.BigEndian.Uint16(b[i:]))
	}
	return sb.String()
}

// gidInterfaceID is the low 64 bits of a GID: for an InfiniBand port's GID 0, the port GUID.
func gidInterfaceID(a netip.Addr) uint64 {
	b := a.As16()
	return binary.BigEndian.Uint64(b[8:])
}
