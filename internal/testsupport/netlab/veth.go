package netlab

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Veth cables the current namespace to ns: a veth pair whose end local stays here and whose end peer moves
// into ns; both ends come up. Deleting either end (DeleteLink) removes the cable.
func Veth(local, peer string, ns netns.NsHandle) error {
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: local}, PeerName: peer}); err != nil {
		return fmt.Errorf("adding veth %s-%s: %w", local, peer, err)
	}
	p, err := netlink.LinkByName(peer)
	if err == nil {
		err = netlink.LinkSetNsFd(p, int(ns))
	}
	if err != nil {
		_ = DeleteLink(local)
		return fmt.Errorf("moving %s into its namespace: %w", peer, err)
	}
	if err := SetUp(local); err != nil {
		return err
	}
	return Do(ns, func() error { return SetUp(peer) })
}

// DeleteLink deletes the named link of the current namespace; a link that is gone already is no error.
func DeleteLink(name string) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		if _, ok := err.(netlink.LinkNotFoundError); ok {
			return nil
		}
		return fmt.Errorf("finding %s: %w", name, err)
	}
	if err := netlink.LinkDel(l); err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	return nil
}

// DeleteNamespace closes ns and removes its name (the namespace ends with its last process or link).
func DeleteNamespace(name string, ns netns.NsHandle) error {
	_ = ns.Close()
	if err := netns.DeleteNamed(name); err != nil {
		return fmt.Errorf("deleting network namespace %s: %w", name, err)
	}
	return nil
}
