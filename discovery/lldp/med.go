package lldp

import (
	"fmt"

	"github.com/gopacket/gopacket/layers"
)

// LLDP-MED (ANSI/TIA-1057) TLVs: organisationally specific TLVs of OUI 00-12-BB. The probe reports none of
// their content (they describe endpoints and their phones more than the switch port a GPU node reaches), but a
// malformed one says that the switch's LLDP agent is broken, so it is a warning like any other bad TLV.

// Value lengths of the LLDP-MED TLVs, after the OUI and subtype (TIA-1057 10.2).
const (
	medCapabilitiesLen  = 3  // capabilities (2) and device type (1)
	medNetworkPolicyLen = 4  // application type (1), flags, VLAN ID, L2 priority and DSCP (3)
	medPowerLen         = 3  // power type, source and priority (1), value (2)
	medCoordinateLen    = 16 // the coordinate-based LCI
	medMinELINLen       = 10 // an emergency call service ELIN: 10 to 25 digits
	medMaxELINLen       = 25
	medMaxInventoryLen  = 32 // hardware, firmware, software revision, serial number, manufacturer, model, asset ID
)

// Location data formats of the LLDP-MED Location Identification TLV.
const (
	medLocationCoordinate = 1
	medLocationCivic      = 2
	medLocationELIN       = 3
)

// medProblem says what is wrong with an LLDP-MED TLV (org.OUI is layers.IEEEOUIMedia), or "" when it is well
// formed: a value of the wrong length for its subtype, a location format it does not define, a reserved subtype,
// or what gopacket's decoder refuses.
func medProblem(org layers.LLDPOrgSpecificTLV) string {
	subtype := layers.LLDPMediaSubtype(org.SubType)
	name := subtype.String()
	if subtype == 0 || subtype > layers.LLDPMediaTypeAssetID {
		return fmt.Sprintf("LLDP-MED: reserved subtype %d", org.SubType)
	}
	info := layers.LinkLayerDiscoveryInfo{OrgTLVs: []layers.LLDPOrgSpecificTLV{org}}
	if _, err := info.DecodeMedia(); err != nil {
		return fmt.Sprintf("LLDP-MED %s: %v", name, err)
	}
	v := org.Info
	exactly := func(want int) string {
		if len(v) != want {
			return fmt.Sprintf("LLDP-MED %s: %d bytes, want %d", name, len(v), want)
		}
		return ""
	}
	switch subtype {
	case layers.LLDPMediaTypeCapabilities:
		return exactly(medCapabilitiesLen)
	case layers.LLDPMediaTypeNetwork:
		return exactly(medNetworkPolicyLen)
	case layers.LLDPMediaTypePower:
		return exactly(medPowerLen)
	case layers.LLDPMediaTypeLocation:
		return medLocationProblem(name, v)
	default: // the inventory TLVs: text
		if len(v) > medMaxInventoryLen {
			return fmt.Sprintf("LLDP-MED %s: %d bytes, want at most %d", name, len(v), medMaxInventoryLen)
		}
	}
	return ""
}

// medLocationProblem checks the value of a Location Identification TLV. DecodeMedia checked the minimum
// lengths: v holds its format byte, a coordinate LCI at least 16 bytes, a civic address LCI at least 4 (its
// length, what, country code).
func medLocationProblem(name string, v []byte) string {
	format, lci := v[0], v[1:]
	switch format {
	case medLocationCoordinate:
		if len(lci) != medCoordinateLen {
			return fmt.Sprintf("LLDP-MED %s: coordinate LCI of %d bytes, want %d", name, len(lci), medCoordinateLen)
		}
	case medLocationCivic:
		if int(lci[0]) != len(lci)-1 { // the LCI length counts the bytes after itself
			return fmt.Sprintf("LLDP-MED %s: civic address LCI length %d, but %d bytes follow", name, lci[0], len(lci)-1)
		}
	case medLocationELIN:
		if len(lci) < medMinELINLen || len(lci) > medMaxELINLen {
			return fmt.Sprintf("LLDP-MED %s: ELIN of %d digits, want %d to %d", name, len(lci), medMinELINLen, medMaxELINLen)
		}
	default:
		return fmt.Sprintf("LLDP-MED %s: location data format %d, want 1 (coordinate), 2 (civic address) or 3 (ELIN)", name, format)
	}
	return ""
}
