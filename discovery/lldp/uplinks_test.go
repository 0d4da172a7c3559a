package lldp

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"
)

func TestIsUplink(t *testing.T) {
	up := func(mod func(*netlink.LinkAttrs)) netlink.LinkAttrs {
		a := netlink.LinkAttrs{Name: "ens1f0np0", Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast,
			EncapType: "ether", OperState: netlink.OperUp}
		if mod != nil {
			mod(&a)
		}
		return a
	}
	for _, tc := range []struct {
		name string
		link netlink.Link
		want bool
	}{
		{"physical NIC, up", &netlink.Device{LinkAttrs: up(nil)}, true},
		{"oper state unknown", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.OperState = netlink.OperUnknown })}, true},
		{"admin down", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.Flags &^= net.FlagUp })}, false},
		{"no carrier", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.OperState = netlink.OperDown })}, false},
		{"lower layer down", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.OperState = netlink.OperLowerLayerDown })}, false},
		{"loopback", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) {
			a.Name, a.Flags, a.EncapType = "lo", net.FlagUp|net.FlagLoopback, "loopback"
		})}, false},
		{"IPoIB", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.Name, a.EncapType = "ib0", "infiniband" })}, false},
		{"bond member", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) {
			a.MasterIndex, a.Slave = 7, &netlink.BondSlave{}
		})}, false},
		{"bridge port", &netlink.Device{LinkAttrs: up(func(a *netlink.LinkAttrs) { a.MasterIndex = 3 })}, false},
		{"bridge", &netlink.Bridge{LinkAttrs: up(nil)}, false},
		{"bond", &netlink.Bond{LinkAttrs: up(nil)}, false},
		{"veth", &netlink.Veth{LinkAttrs: up(nil)}, false},
		{"vlan", &netlink.Vlan{LinkAttrs: up(nil), VlanId: 10}, false},
		{"macvlan", &netlink.Macvlan{LinkAttrs: up(nil)}, false},
		{"dummy", &netlink.Dummy{LinkAttrs: up(nil)}, false},
		{"vxlan", &netlink.Vxlan{LinkAttrs: up(nil)}, false},
		{"tun", &netlink.Tuntap{LinkAttrs: up(nil)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsUplink(tc.link); got != tc.want {
				t.Errorf("IsUplink = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUplinksRuns(t *testing.T) {
	names, err := Uplinks("")
	if err != nil {
		t.Fatalf("Uplinks: %v", err)
	}
	for _, n := range names {
		if n == "lo" {
			t.Errorf("Uplinks lists loopback: %q", names)
		}
	}
}
