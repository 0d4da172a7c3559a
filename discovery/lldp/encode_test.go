package lldp

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestAdvertRoundTrip(t *testing.T) {
	byName := testAdvert()
	byName.ChassisMAC, byName.ChassisName = nil, "leaf02"
	byName.TTL = 30 * time.Second
	byName.ManagementIPv4 = netip.Addr{}
	shutdown := testAdvert()
	shutdown.Shutdown = true
	bare := Advert{ChassisName: "s", PortName: "p"}

	for _, tc := range []struct {
		name   string
		advert Advert
		want   Neighbor
	}{
		{"MAC chassis", testAdvert(), Neighbor{
			ChassisID: "0c:42:a1:11:22:33", ChassisIDSubtype: "mac", PortID: "Ethernet1/1", PortIDSubtype: "ifName",
			TTL: DefaultTTL, SystemName: "leaf01", PortDescription: "to gpu-node-7 eth2",
			SystemDescription: "SONiC Software Version: 202405", ManagementAddress: "10.0.0.11",
		}},
		{"named chassis", byName, Neighbor{
			ChassisID: "leaf02", ChassisIDSubtype: "local", PortID: "Ethernet1/1", PortIDSubtype: "ifName",
			TTL: 30 * time.Second, SystemName: "leaf01", PortDescription: "to gpu-node-7 eth2",
			SystemDescription: "SONiC Software Version: 202405",
		}},
		{"shutdown", shutdown, Neighbor{
			ChassisID: "0c:42:a1:11:22:33", ChassisIDSubtype: "mac", PortID: "Ethernet1/1", PortIDSubtype: "ifName",
			SystemName: "leaf01", PortDescription: "to gpu-node-7 eth2",
			SystemDescription: "SONiC Software Version: 202405", ManagementAddress: "10.0.0.11",
		}},
		{"mandatory only", bare, Neighbor{ChassisID: "s", ChassisIDSubtype: "local", PortID: "p", PortIDSubtype: "ifName", TTL: DefaultTTL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.advert.Frame(testSrcMAC)
			if err != nil {
				t.Fatalf("Frame: %v", err)
			}
			if len(f) < 60 {
				t.Errorf("frame is %d bytes, want padding to 60", len(f))
			}
			if string(f[:6]) != string(NearestBridge) || string(f[6:12]) != string(testSrcMAC) {
				t.Errorf("addresses % x", f[:12])
			}
			got := mustDecode(t, f)
			tc.want.Source = "lldp"
			if got.Source != tc.want.Source || got.ChassisID != tc.want.ChassisID || got.ChassisIDSubtype != tc.want.ChassisIDSubtype ||
				got.PortID != tc.want.PortID || got.PortIDSubtype != tc.want.PortIDSubtype || got.TTL != tc.want.TTL ||
				got.SystemName != tc.want.SystemName || got.PortDescription != tc.want.PortDescription ||
				got.SystemDescription != tc.want.SystemDescription || got.ManagementAddress != tc.want.ManagementAddress ||
				len(got.Warnings) != 0 {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestAdvertFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		advert func(*Advert)
		src    net.HardwareAddr
		want   string
	}{
		{"short source MAC", func(*Advert) {}, net.HardwareAddr{1, 2}, "source MAC"},
		{"short chassis MAC", func(a *Advert) { a.ChassisMAC = net.HardwareAddr{1} }, testSrcMAC, "chassis MAC"},
		{"no chassis", func(a *Advert) { a.ChassisMAC = nil }, testSrcMAC, "chassis name"},
		{"no port", func(a *Advert) { a.PortName = "" }, testSrcMAC, "port name"},
		{"long system name", func(a *Advert) { a.SystemName = strings.Repeat("x", 256) }, testSrcMAC, "system name"},
		{"TTL too long", func(a *Advert) { a.TTL = 20 * time.Hour }, testSrcMAC, "TTL"},
		{"sub-second TTL", func(a *Advert) { a.TTL = time.Millisecond }, testSrcMAC, "TTL"},
		{"IPv6 management address", func(a *Advert) { a.ManagementIPv4 = netip.MustParseAddr("fd00::1") }, testSrcMAC, "not IPv4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := testAdvert()
			tc.advert(&a)
			_, err := a.Frame(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Frame error = %v, want one about %q", err, tc.want)
			}
		})
	}
}
