package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/discovery/lldp"
	"github.com/fabricmap/fabricmap/internal/testsupport/netlab"
)

// fabric is an emulated Ethernet fabric of network namespaces: a namespace per switch, announcing LLDP on
// every port, and a namespace per node, cabled to switch ports by veth pairs. The node end of every cable is
// named "up<i>"; the switch end "swp<n>".
type fabric struct {
	t      *testing.T
	prefix string

	mu       sync.Mutex
	switches map[string]*emuSwitch
	nodes    map[string]netns.NsHandle
	cables   map[string]*cable // by "<node>/up<i>"
	nextPort int
}

type emuSwitch struct {
	name string
	ns   netns.NsHandle
	mac  net.HardwareAddr
}

// cable is a node uplink and the switch port at its other end, with the sender announcing that port.
type cable struct {
	sw     *emuSwitch
	port   string // the switch end's interface name, e.g. swp3
	sender *lldp.Sender
	stop   context.CancelFunc
	done   chan struct{}
}

func newFabric(t *testing.T) *fabric {
	f := &fabric{t: t, prefix: fmt.Sprintf("fme2e-%d-", os.Getpid()), switches: map[string]*emuSwitch{},
		nodes: map[string]netns.NsHandle{}, cables: map[string]*cable{}}
	t.Cleanup(f.close)
	return f
}

// addSwitch creates a switch namespace whose chassis MAC ends in id.
func (f *fabric) addSwitch(name string, id byte) {
	f.t.Helper()
	ns, err := netlab.NewNamespace(f.prefix + name)
	if err != nil {
		f.t.Fatal(err)
	}
	f.switches[name] = &emuSwitch{name: name, ns: ns, mac: net.HardwareAddr{0x0c, 0x42, 0xa1, 0xe2, 0xe0, id}}
}

// addNode creates a node namespace.
func (f *fabric) addNode(name string) netns.NsHandle {
	f.t.Helper()
	ns, err := netlab.NewNamespace(f.prefix + name)
	if err != nil {
		f.t.Fatal(err)
	}
	f.nodes[name] = ns
	return ns
}

// cable connects the node's uplink up<i> to a new port of sw, which starts announcing itself on it.
func (f *fabric) cable(node string, i int, sw string) {
	f.t.Helper()
	f.mu.Lock()
	f.nextPort++
	port := fmt.Sprintf("swp%d", f.nextPort)
	f.mu.Unlock()
	up := fmt.Sprintf("up%d", i)
	s := f.switches[sw]
	err := netlab.Do(f.nodes[node], func() error {
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: up}, PeerName: port}); err != nil {
			return fmt.Errorf("adding veth %s-%s: %w", up, port, err)
		}
		if err := netlab.SetUp(up); err != nil {
			return err
		}
		peer, err := netlink.LinkByName(port)
		if err != nil {
			return err
		}
		return netlink.LinkSetNsFd(peer, int(s.ns))
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cables[node+"/"+up] = f.announce(s, port)
}

// move re-cables the node's uplink up<i> to a new switch: the old switch says goodbye on the port (TTL 0),
// the cable end moves to the new switch's namespace and the new switch announces itself on it.
func (f *fabric) move(node string, i int, to string) {
	f.t.Helper()
	key := fmt.Sprintf("%s/up%d", node, i)
	c := f.cables[key]
	c.stop()
	<-c.done
	dst := f.switches[to]
	err := netlab.Do(c.sw.ns, func() error {
		if err := c.sender.Close(); err != nil {
			return err
		}
		ifi, err := net.InterfaceByName(c.port)
		if err != nil {
			return err
		}
		bye, err := lldp.NewSender(ifi, lldp.Advert{ChassisMAC: c.sw.mac, PortName: c.port, SystemName: c.sw.name, Shutdown: true})
		if err != nil {
			return err
		}
		defer bye.Close()
		for range 3 {
			if err := bye.Send(); err != nil {
				return err
			}
		}
		link, err := netlink.LinkByName(c.port)
		if err != nil {
			return err
		}
		return netlink.LinkSetNsFd(link, int(dst.ns))
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cables[key] = f.announce(dst, c.port)
}

// announce brings the switch's port up and announces the switch on it every 200 ms until stopped.
func (f *fabric) announce(s *emuSwitch, port string) *cable {
	f.t.Helper()
	var sender *lldp.Sender
	err := netlab.Do(s.ns, func() error {
		if err := netlab.SetUp(port); err != nil {
			return err
		}
		ifi, err := net.InterfaceByName(port)
		if err != nil {
			return err
		}
		sender, err = lldp.NewSender(ifi, lldp.Advert{ChassisMAC: s.mac, PortName: port, SystemName: s.name, TTL: 30 * time.Second})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &cable{sw: s, port: port, sender: sender, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		_ = sender.Run(ctx, 200*time.Millisecond)
	}()
	return c
}

// proxyAPIServer listens on addr (host:port of the API server) inside ns and relays every connection to the
// real API server in the test's own namespace: an agent in the node's namespace reaches the API server at the
// address its kubeconfig names, as a hostNetwork pod reaches it on a real node.
func (f *fabric) proxyAPIServer(ns netns.NsHandle, addr string) {
	f.t.Helper()
	var ln net.Listener
	err := netlab.Do(ns, func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		f.t.Fatalf("API server proxy: %v", err)
	}
	f.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(in, addr)
		}
	}()
}

func relay(in net.Conn, addr string) {
	defer in.Close()
	out, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

func (f *fabric) close() {
	for _, c := range f.cables {
		c.stop()
		<-c.done
		_ = c.sender.Close()
	}
	for name, ns := range f.nodes {
		ns.Close()
		_ = netns.DeleteNamed(f.prefix + name)
	}
	for name, s := range f.switches {
		s.ns.Close()
		_ = netns.DeleteNamed(f.prefix + name)
	}
}
