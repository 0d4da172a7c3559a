package lldp

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Ethernet framing of LLDP.
const (
	ethernetHeaderLen = 14
	dot1QTagLen       = 4
)

// Decode decodes a whole Ethernet frame carrying an LLDPDU (ethertype 0x88cc, optionally behind one 802.1Q
// tag). It fails when the frame is not LLDP, is truncated, or lacks a usable chassis ID, port ID or TTL; the
// errors wrap ErrNotLLDP, ErrTruncated, ErrMissingTLV or ErrMalformedTLV and name the offset at fault.
// Lesser problems (an unknown ID subtype, a malformed optional TLV) are returned in Neighbor.Warnings.
func Decode(frame []byte) (Neighbor, error) {
	lldpdu, base, err := lldpPayload(frame)
	if err != nil {
		return Neighbor{}, err
	}
	tlvs, err := splitTLVs(lldpdu, base)
	if err != nil {
		return Neighbor{}, err
	}
	mandatory, optional, warnings, err := checkTLVs(tlvs)
	if err != nil {
		return Neighbor{}, err
	}
	lldp, info, err := decodeWithGopacket(joinTLVs(mandatory, optional))
	if err != nil {
		return Neighbor{}, fmt.Errorf("LLDPDU at offset %d: %w", base, err)
	}

	n := Neighbor{
		Source:            v1alpha1.SourceLLDP,
		TTL:               time.Duration(lldp.TTL) * time.Second,
		SystemName:        cleanText([]byte(info.SysName)),
		SystemDescription: cleanText([]byte(info.SysDescription)),
		PortDescription:   cleanText([]byte(info.PortDescription)),
	}
	var warning string
	n.ChassisID, n.ChassisIDSubtype, warning = renderID(chassisSubtypes, byte(lldp.ChassisID.Subtype), lldp.ChassisID.ID)
	warnings = appendWarning(warnings, mandatory.chassis, warning)
	n.PortID, n.PortIDSubtype, warning = renderID(portSubtypes, byte(lldp.PortID.Subtype), lldp.PortID.ID)
	warnings = appendWarning(warnings, mandatory.port, warning)
	for _, t := range optional {
		switch t.typ {
		case layers.LLDPTLVMgmtAddress: // checkTLVs keeps only one
			n.ManagementAddress, warning = renderAddress(byte(info.MgmtAddress.Subtype), info.MgmtAddress.Address)
			warnings = appendWarning(warnings, t, warning)
		case layers.LLDPTLVOrgSpecific:
			warnings = appendWarning(warnings, t, decodeOrgTLV(&n, t))
		}
	}
	n.Warnings = warnings
	return n, nil
}

// appendWarning appends a warning about t when there is one.
func appendWarning(warnings []string, t tlv, warning string) []string {
	if warning == "" {
		return warnings
	}
	return append(warnings, fmt.Sprintf("%s: %s", t, warning))
}

// lldpPayload returns the LLDPDU inside an Ethernet frame and its offset in the frame.
func lldpPayload(frame []byte) (lldpdu []byte, offset int, err error) {
	var eth layers.Ethernet
	if err := eth.DecodeFromBytes(frame, gopacket.NilDecodeFeedback); err != nil {
		return nil, 0, fmt.Errorf("Ethernet header: %w (%d bytes, want %d)", ErrTruncated, len(frame), ethernetHeaderLen)
	}
	etherType, payload, offset := eth.EthernetType, eth.Payload, ethernetHeaderLen
	if etherType == layers.EthernetTypeDot1Q {
		var tag layers.Dot1Q
		if err := tag.DecodeFromBytes(payload, gopacket.NilDecodeFeedback); err != nil {
			return nil, 0, fmt.Errorf("802.1Q tag at offset %d: %w", offset, ErrTruncated)
		}
		etherType, payload, offset = tag.Type, tag.Payload, offset+dot1QTagLen
	}
	if etherType != layers.EthernetTypeLinkLayerDiscovery {
		return nil, 0, fmt.Errorf("%w: ethertype %#04x", ErrNotLLDP, uint16(etherType))
	}
	return payload, offset, nil
}

// decodeWithGopacket runs gopacket's LLDP decoder over a well-formed LLDPDU, turning any panic into an error.
func decodeWithGopacket(lldpdu []byte) (lldp *layers.LinkLayerDiscovery, info *layers.LinkLayerDiscoveryInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: gopacket panicked: %v", ErrMalformedTLV, r)
		}
	}()
	pkt := gopacket.NewPacket(lldpdu, layers.LayerTypeLinkLayerDiscovery, gopacket.DecodeOptions{NoCopy: true})
	if e := pkt.ErrorLayer(); e != nil {
		return nil, nil, fmt.Errorf("%w: gopacket: %v", ErrMalformedTLV, e.Error())
	}
	lldp, _ = pkt.Layer(layers.LayerTypeLinkLayerDiscovery).(*layers.LinkLayerDiscovery)
	info, _ = pkt.Layer(layers.LayerTypeLinkLayerDiscoveryInfo).(*layers.LinkLayerDiscoveryInfo)
	if lldp == nil || info == nil {
		return nil, nil, fmt.Errorf("%w: gopacket decoded no LLDP layer", ErrMalformedTLV)
	}
	return lldp, info, nil
}

// decodeOrgTLV folds the 802.1 and 802.3 organisationally specific TLVs the probe uses (port VLAN ID,
// maximum frame size, link aggregation) into n, decoding each TLV on its own with gopacket so that one bad
// TLV cannot hide the others. It returns a warning when the TLV is malformed: one of those, or an LLDP-MED TLV
// (medProblem), whose content the probe does not use.
func decodeOrgTLV(n *Neighbor, t tlv) (warning string) {
	defer func() {
		if r := recover(); r != nil {
			warning = fmt.Sprintf("gopacket panicked: %v; ignored", r)
		}
	}()
	org := layers.LLDPOrgSpecificTLV{
		OUI:     layers.IEEEOUI(uint32(t.value[0])<<16 | uint32(binary.BigEndian.Uint16(t.value[1:3]))),
		SubType: t.value[3],
		Info:    t.value[orgHeaderLen:],
	}
	info := layers.LinkLayerDiscoveryInfo{OrgTLVs: []layers.LLDPOrgSpecificTLV{org}}
	switch {
	case org.OUI == layers.IEEEOUI8021 && org.SubType == layers.LLDP8021SubtypePortVLANID:
		dot1, err := info.Decode8021()
		if err != nil {
			return fmt.Sprintf("802.1 port VLAN ID: %v; ignored", err)
		}
		if dot1.PVID > maxVLANID {
			return fmt.Sprintf("802.1 port VLAN ID %d outside 1..%d; ignored", dot1.PVID, maxVLANID)
		}
		n.PortVLANID = dot1.PVID
	case org.OUI == layers.IEEEOUI8021 && org.SubType == layers.LLDP8021SubtypeLinkAggregation:
		dot1, err := info.Decode8021()
		if err != nil {
			return fmt.Sprintf("802.1 link aggregation: %v; ignored", err)
		}
		n.Aggregation = aggregation(dot1.LinkAggregation)
	case org.OUI == layers.IEEEOUI8023 && org.SubType == layers.LLDP8023SubtypeMTU:
		dot3, err := info.Decode8023()
		if err != nil {
			return fmt.Sprintf("802.3 maximum frame size: %v; ignored", err)
		}
		n.MaxFrameSize = dot3.MTU
	case org.OUI == layers.IEEEOUI8023 && org.SubType == layers.LLDP8023SubtypeLinkAggregation:
		dot3, err := info.Decode8023()
		if err != nil {
			return fmt.Sprintf("802.3 link aggregation: %v; ignored", err)
		}
		n.Aggregation = aggregation(dot3.LinkAggregation)
	case org.OUI == layers.IEEEOUIMedia:
		if problem := medProblem(org); problem != "" {
			return problem + "; ignored"
		}
	}
	return ""
}

// maxVLANID is the highest VLAN ID: 4095 is reserved, and the 12-bit field holds no more.
const maxVLANID = 4094

func aggregation(a layers.LLDPLinkAggregation) *LinkAggregation {
	return &LinkAggregation{Capable: a.Supported, Enabled: a.Enabled, PortID: a.PortID}
}
