// Package demo runs fabricmap end to end on one machine with no cluster: a local control plane, the real agent
// binary once per simulated node (its LLDP input a generated capture), and the real aggregator binary.
package demo

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/fabricmap/fabricmap/discovery/lldp"
)

// SimNode is a simulated node and the switch ports its links reach.
type SimNode struct {
	Name  string
	Ports []SwitchPort
}

// SwitchPort is one switch port a simulated node's link lands on.
type SwitchPort struct {
	Switch string
	MAC    net.HardwareAddr
	Port   string
}

// DefaultFabric is the embedded fabric the demo runs: two leaves of three nodes, two rail-optimised leaves that
// share two hosts (they form one domain), and one node whose links see no switch.
func DefaultFabric() []SimNode {
	sw := func(name string, id byte) func(port string) SwitchPort {
		mac := net.HardwareAddr{0x02, 0xfa, 0xb0, 0x00, 0x00, id}
		return func(port string) SwitchPort { return SwitchPort{Switch: name, MAC: mac, Port: port} }
	}
	leafA, leafB := sw("sw-leaf-a", 1), sw("sw-leaf-b", 2)
	rail0, rail1 := sw("sw-rail-0", 3), sw("sw-rail-1", 4)
	return []SimNode{
		{Name: "gpu-a1", Ports: []SwitchPort{leafA("Ethernet1/1")}},
		{Name: "gpu-a2", Ports: []SwitchPort{leafA("Ethernet1/2")}},
		{Name: "gpu-a3", Ports: []SwitchPort{leafA("Ethernet1/3")}},
		{Name: "gpu-b1", Ports: []SwitchPort{leafB("Ethernet1/1")}},
		{Name: "gpu-b2", Ports: []SwitchPort{leafB("Ethernet1/2")}},
		{Name: "gpu-b3", Ports: []SwitchPort{leafB("Ethernet1/3")}},
		{Name: "gpu-r1", Ports: []SwitchPort{rail0("Ethernet1/1"), rail1("Ethernet1/1")}},
		{Name: "gpu-r2", Ports: []SwitchPort{rail0("Ethernet1/2"), rail1("Ethernet1/2")}},
		{Name: "gpu-lonely"},
	}
}

// WriteCapture writes the LLDP frames node would hear to a pcap file in dir and returns its path.
func WriteCapture(dir string, node SimNode, at time.Time) (string, error) {
	frames := make([]lldp.CapturedFrame, 0, len(node.Ports))
	for i, p := range node.Ports {
		ad := lldp.Advert{
			ChassisMAC:        p.MAC,
			PortName:          p.Port,
			SystemName:        p.Switch,
			PortDescription:   "to " + node.Name,
			SystemDescription: "simulated leaf switch",
			ManagementIPv4:    netip.AddrFrom4([4]byte{192, 0, 2, p.MAC[5]}),
		}
		f, err := ad.Frame(p.MAC)
		if err != nil {
			return "", fmt.Errorf("node %s, switch %s: %w", node.Name, p.Switch, err)
		}
		frames = append(frames, lldp.CapturedFrame{Timestamp: at.Add(time.Duration(i) * time.Millisecond), Data: f})
	}
	path := filepath.Join(dir, node.Name+".pcap")
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := lldp.WritePcap(out, frames); err != nil {
		out.Close()
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, out.Close()
}
