// Package netlab builds small networks on one machine for tests: network namespaces that stand for nodes and
// switches, veth pairs between them, and real lldpd daemons announcing LLDP inside them. Everything it makes
// lives in namespaces the test made (never on the host's own uplinks), and needs root.
package netlab

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Do runs fn on an OS thread inside ns, then puts the thread back into the namespace it came from.
// Sockets fn opens, and processes it starts, live in ns.
func Do(ns netns.NsHandle, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- fmt.Errorf("current network namespace: %w", err)
			return // the thread stays locked and ends with this goroutine
		}
		defer origin.Close()
		if err := netns.Set(ns); err != nil {
			done <- fmt.Errorf("entering network namespace: %w", err)
			return
		}
		ferr := fn()
		if err := netns.Set(origin); err != nil {
			done <- fmt.Errorf("leaving network namespace: %w", err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// NewNamespace creates the network namespace name with its loopback up.
func NewNamespace(name string) (netns.NsHandle, error) {
	done := make(chan error, 1)
	var ns netns.NsHandle
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- err
			return
		}
		defer origin.Close()
		ns, err = netns.NewNamed(name) // moves the thread into it
		if err == nil {
			err = SetUp("lo")
		}
		if serr := netns.Set(origin); serr != nil {
			done <- fmt.Errorf("leaving network namespace %s: %w", name, serr)
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	if err := <-done; err != nil {
		return 0, fmt.Errorf("creating network namespace %s: %w", name, err)
	}
	return ns, nil
}

// SetUp brings the named link of the current namespace up.
func SetUp(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("finding %s: %w", name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("bringing %s up: %w", name, err)
	}
	return nil
}
