package lldp

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"

	"github.com/vishvananda/netlink"
)

// IsUplink reports whether link looks like a physical uplink worth listening on for LLDP: a plain device
// (no virtual kind such as bridge, bond, veth, vlan, macvlan, dummy or tunnel), Ethernet-framed (not
// loopback or IPoIB), administratively up with a link that is not down, and not enslaved to a bond or
// bridge.
func IsUplink(link netlink.Link) bool {
	a := link.Attrs()
	if a == nil {
		return false
	}
	switch {
	case link.Type() != "device",
		a.EncapType != "ether",
		a.Flags&net.FlagLoopback != 0,
		a.Flags&net.FlagUp == 0,
		a.MasterIndex != 0,
		a.Slave != nil:
		return false
	}
	switch a.OperState {
	case netlink.OperDown, netlink.OperLowerLayerDown, netlink.OperNotPresent:
		return false
	}
	return true
}

// Uplinks lists, in name order, the interfaces of the current network namespace that IsUplink accepts. When
// sysfsRoot is set, an interface must also have a backing device in sysfs (<sysfsRoot>/class/net/<name>/device),
// which weeds out virtual devices that netlink reports without a kind.
func Uplinks(sysfsRoot string) ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links with netlink: %w", err)
	}
	var names []string
	for _, link := range links {
		if !IsUplink(link) {
			continue
		}
		name := link.Attrs().Name
		if sysfsRoot != "" {
			ok, err := hasBackingDevice(sysfsRoot, name)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// hasBackingDevice reports whether sysfs shows a bus device behind the interface.
func hasBackingDevice(sysfsRoot, name string) (bool, error) {
	path := filepath.Join(sysfsRoot, "class", "net", name, "device")
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("check backing device of %s: %w", name, err)
	}
}
