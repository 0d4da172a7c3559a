package lldp

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// NearestBridge is the multicast address LLDP frames are sent to (IEEE 802.1AB nearest-bridge group).
var NearestBridge = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// DefaultTTL is the TTL an Advert announces when it sets none: four times the customary 30 s interval.
const DefaultTTL = 120 * time.Second

// Wire limits of the TLVs an Advert fills.
const (
	maxIDBytes   = 255
	maxTextBytes = 255
	maxTTL       = 65535 * time.Second
)

// Advert is what a switch port announces over LLDP. It is used to emulate switches in tests and demos.
type Advert struct {
	// ChassisMAC identifies the switch by MAC address (chassis subtype mac). When nil, ChassisName is used.
	ChassisMAC net.HardwareAddr
	// ChassisName identifies the switch by a locally assigned name (chassis subtype local).
	ChassisName string
	// PortName names the switch port (port subtype ifName), e.g. "Ethernet1/1".
	PortName string
	// TTL is how long the announcement stays valid, in whole seconds; zero means DefaultTTL.
	TTL time.Duration
	// Shutdown announces a TTL of 0, telling receivers to forget this port at once.
	Shutdown bool
	// SystemName is the switch's name; omitted when empty.
	SystemName string
	// PortDescription describes the switch port; omitted when empty.
	PortDescription string
	// SystemDescription describes the switch; omitted when empty.
	SystemDescription string
	// ManagementIPv4 is the switch's management address; omitted when invalid (the zero netip.Addr).
	ManagementIPv4 netip.Addr
}

// Frame returns a complete Ethernet frame carrying the advert, from srcMAC to NearestBridge.
func (a Advert) Frame(srcMAC net.HardwareAddr) ([]byte, error) {
	if len(srcMAC) != 6 {
		return nil, fmt.Errorf("LLDP advert: source MAC %q is not 6 bytes", srcMAC)
	}
	lldp, err := a.layer()
	if err != nil {
		return nil, fmt.Errorf("LLDP advert for port %q: %w", a.PortName, err)
	}
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: NearestBridge, EthernetType: layers.EthernetTypeLinkLayerDiscovery}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, lldp); err != nil {
		return nil, fmt.Errorf("LLDP advert for port %q: serialize: %w", a.PortName, err)
	}
	return buf.Bytes(), nil
}

// layer builds gopacket's LLDP layer for the advert, checking every field against its wire limits.
func (a Advert) layer() (*layers.LinkLayerDiscovery, error) {
	chassis := layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeMACAddr, ID: a.ChassisMAC}
	switch {
	case a.ChassisMAC != nil && len(a.ChassisMAC) != 6:
		return nil, fmt.Errorf("chassis MAC %q is not 6 bytes", a.ChassisMAC)
	case a.ChassisMAC == nil:
		if err := checkLen("chassis name", a.ChassisName, 1, maxIDBytes); err != nil {
			return nil, err
		}
		chassis = layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeLocal, ID: []byte(a.ChassisName)}
	}
	if err := checkLen("port name", a.PortName, 1, maxIDBytes); err != nil {
		return nil, err
	}
	ttl, err := a.ttlSeconds()
	if err != nil {
		return nil, err
	}
	lldp := &layers.LinkLayerDiscovery{
		ChassisID: chassis,
		PortID:    layers.LLDPPortID{Subtype: layers.LLDPPortIDSubtypeIfaceName, ID: []byte(a.PortName)},
		TTL:       ttl,
	}
	for _, text := range []struct {
		typ   layers.LLDPTLVType
		name  string
		value string
	}{
		{layers.LLDPTLVPortDescription, "port description", a.PortDescription},
		{layers.LLDPTLVSysName, "system name", a.SystemName},
		{layers.LLDPTLVSysDescription, "system description", a.SystemDescription},
	} {
		if text.value == "" {
			continue
		}
		if err := checkLen(text.name, text.value, 1, maxTextBytes); err != nil {
			return nil, err
		}
		lldp.Values = append(lldp.Values, value(text.typ, []byte(text.value)))
	}
	if a.ManagementIPv4.IsValid() {
		ip := a.ManagementIPv4.Unmap()
		if !ip.Is4() {
			return nil, fmt.Errorf("management address %s is not IPv4", a.ManagementIPv4)
		}
		lldp.Values = append(lldp.Values, value(layers.LLDPTLVMgmtAddress, mgmtIPv4Value(ip)))
	}
	return lldp, nil
}

// ttlSeconds is the TTL field the advert announces.
func (a Advert) ttlSeconds() (uint16, error) {
	switch {
	case a.Shutdown:
		return 0, nil
	case a.TTL == 0:
		return uint16(DefaultTTL / time.Second), nil
	case a.TTL < time.Second || a.TTL > maxTTL:
		return 0, fmt.Errorf("TTL %v outside 1s..%v", a.TTL, maxTTL)
	}
	return uint16(a.TTL / time.Second), nil
}

// mgmtIPv4Value is the value of a management address TLV for ip, with an unknown interface number and no OID.
func mgmtIPv4Value(ip netip.Addr) []byte {
	addr := ip.As4()
	v := []byte{1 + byte(len(addr)), familyIPv4}
	v = append(v, addr[:]...)
	v = append(v, byte(layers.LLDPInterfaceSubtypeUnknown))
	v = binary.BigEndian.AppendUint32(v, 0)
	return append(v, 0) // OID length
}

func value(typ layers.LLDPTLVType, v []byte) layers.LinkLayerDiscoveryValue {
	return layers.LinkLayerDiscoveryValue{Type: typ, Length: uint16(len(v)), Value: v}
}

func checkLen(name, s string, min, max int) error {
	if len(s) < min || len(s) > max {
		return fmt.Errorf("%s %q is %d bytes, want %d..%d", name, s, len(s), min, max)
	}
	return nil
}
