package lldp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// TestNetnsLLDP wires a "switch" namespace to a "node" namespace with a veth pair, has the switch end send
// real LLDP frames with a Sender, and checks that the probe inside the node namespace reports the switch,
// then forgets it when the switch announces TTL 0.
func TestNetnsLLDP(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	origin, err := netns.Get()
	if err != nil {
		t.Fatalf("get current network namespace: %v", err)
	}
	defer origin.Close()
	defer func() {
		if err := netns.Set(origin); err != nil {
			t.Errorf("return to the original network namespace: %v", err)
		}
	}()

	switchNS := newNamespace(t, fmt.Sprintf("fabricmap-lldp-switch-%d", os.Getpid()))
	nodeNS := newNamespace(t, fmt.Sprintf("fabricmap-lldp-node-%d", os.Getpid())) // the thread is now in it
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel) // runs before the namespaces are deleted: listeners and senders let go of them first

	// The veth pair: node0 stays in the node namespace, swp1 moves to the switch.
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "node0"}, PeerName: "swp1"}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("add veth pair: %v", err)
	}
	mustSetUp(t, "node0")
	swp1, err := netlink.LinkByName("swp1")
	if err != nil {
		t.Fatalf("find swp1: %v", err)
	}
	if err := netlink.LinkSetNsFd(swp1, int(switchNS)); err != nil {
		t.Fatalf("move swp1 to the switch namespace: %v", err)
	}

	// The switch: swp1 up, announcing every 100 ms.
	enter(t, switchNS)
	mustSetUp(t, "swp1")
	advert := testAdvert()
	sender := newSender(t, "swp1", advert)
	shutdown := advert
	shutdown.Shutdown = true
	shutdownSender := newSender(t, "swp1", shutdown)
	senderCtx, stopSender := context.WithCancel(ctx)
	var senderDone sync.WaitGroup
	senderDone.Go(func() {
		if err := sender.Run(senderCtx, 100*time.Millisecond); err != nil {
			t.Errorf("sender: %v", err)
		}
	})

	// The node: a one-shot Run hears the switch.
	enter(t, nodeNS)
	p, err := New(discovery.Config{}, Settings{Interfaces: []string{"node0"}, ListenSeconds: 3}) // generous: CI machines are loaded
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := v1alpha1.LinkNeighbor{
		Source: v1alpha1.SourceLLDP, Interface: "node0",
		ChassisID: "0c:42:a1:11:22:33", ChassisIDSubtype: "mac", PortID: "Ethernet1/1", PortIDSubtype: "ifName",
		SystemName: "leaf01", PortDescription: advert.PortDescription, SystemDescription: advert.SystemDescription,
		ManagementAddress: "10.0.0.11",
	}
	if len(res.Neighbors) != 1 || res.Neighbors[0] != want || len(res.Warnings) != 0 || res.NotApplicable != "" {
		t.Fatalf("Run = %+v\nwant the single neighbour %+v", res, want)
	}

	// Started, the probe keeps listening; the switch stops announcing and then shuts down its LLDP.
	if err := p.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopSender()
	senderDone.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := shutdownSender.Send(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		res, err := p.Run(ctx)
		if err != nil {
			t.Fatalf("Run after Start: %v", err)
		}
		if len(res.Neighbors) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("neighbour still reported after TTL 0 frames: %+v", res.Neighbors)
		}
	}
}

// newNamespace creates a named network namespace, leaving the calling (locked) thread in it, and deletes it
// when the test ends. It skips the test when namespaces cannot be created.
func newNamespace(t *testing.T, name string) netns.NsHandle {
	t.Helper()
	ns, err := netns.NewNamed(name)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot create network namespace %s (needs root/CAP_SYS_ADMIN): %v", name, err)
	}
	if err != nil {
		t.Fatalf("create network namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete network namespace %s: %v", name, err)
		}
	})
	return ns
}

// enter switches the calling (locked) thread into ns.
func enter(t *testing.T, ns netns.NsHandle) {
	t.Helper()
	if err := netns.Set(ns); err != nil {
		t.Fatalf("enter network namespace: %v", err)
	}
}

func mustSetUp(t *testing.T, name string) {
	t.Helper()
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		t.Fatalf("set %s up: %v", name, err)
	}
}

// newSender opens a Sender on the named interface of the current namespace, closed when the test ends.
func newSender(t *testing.T, name string, a Advert) *Sender {
	t.Helper()
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSender(ifi, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
