// Package demo runs fabricmap end to end on one machine with no cluster: a local control plane; the real agent
// binary once per simulated node (its LLDP input a generated capture, its GPUs the stand-in NVML library); NVIDIA
// UFM on 127.0.0.1 answering from a saved dump of a rail-optimised InfiniBand fabric; the real aggregator binary,
// which merges both into one tree; and the placer, which places a gang on that tree.
package demo

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/fabricmap/fabricmap/discovery/lldp"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// Fabric is what the demo simulates: the nodes whose agents report what they see, and the nodes UFM knows.
type Fabric struct {
	// Nodes are the nodes whose agent runs (each with a Node object).
	Nodes []SimNode
	// UFMDump is a folder of saved UFM answers (systems.json, links.json, ports.json) that the demo's UFM serves.
	UFMDump string
	// UFMNodes are the nodes only UFM knows (a Node object each, no agent), with their GPU count.
	UFMNodes []SimNode
	// UFMStorageDevices are the dump's storage HCAs (the aggregator's --ufm-storage-devices).
	UFMStorageDevices []string
	// Gangs are the gangs the placer places, in order, once the tree is written.
	Gangs []GangSpec
}

// SimNode is a simulated node: the switch ports its links reach and its GPUs.
type SimNode struct {
	Name  string
	Ports []SwitchPort
	// GPUs is the node's GPU count, its allocatable nvidia.com/gpu (0: no GPU, no NVML probe).
	GPUs int
	// GPUModel is the model NVML reports.
	GPUModel string
	// NVLink is the multi-node NVLink domain of its GPUs; nil when they have none (an HGX H100).
	NVLink *NVLinkDomain
}

// NVLinkDomain is a multi-node NVLink fabric registration, as NVML reports it for every GPU of the domain.
type NVLinkDomain struct {
	// ClusterUUID is 32 hex digits; Clique the clique within that cluster.
	ClusterUUID string
	Clique      int
}

// SwitchPort is one switch port a simulated node's link lands on.
type SwitchPort struct {
	Switch string
	MAC    net.HardwareAddr
	Port   string
}

// GangSpec is a gang of gated pods in the plain-label form the placer reads (fabricmap.io/gang, dp, pp, rank).
type GangSpec struct {
	Namespace, Name string
	// DP and PP are its data- and pipeline-parallel degrees: DP x PP pods.
	DP, PP int
	// GPUs is what each pod requests.
	GPUs int
}

// Pods is the gang's size.
func (g GangSpec) Pods() int { return g.DP * g.PP }

// DefaultFabric is the fabric the demo runs. On Ethernet, reported by the agents over LLDP: one leaf holding two
// GB200 NVL72 racks (three compute trays of 4 GPUs each, one NVLink domain per rack), two rail-optimised leaves that share two
// HGX H100 hosts (they form one domain), and one node whose links see no switch. On InfiniBand, known only to UFM
// (sources/ufm/testdata/railopt): two scalable units of four DGX hosts, each unit's four rail leaves shared by its
// hosts, two spines above. Two gangs: four pods of 8 GPUs, which one DGX unit holds, and three pods of 4 GPUs,
// which one NVLink domain holds (two HGX hosts would too, one tier further apart).
func DefaultFabric() Fabric {
	sw := func(name string, id byte) func(port string) SwitchPort {
		mac := net.HardwareAddr{0x02, 0xfa, 0xb0, 0x00, 0x00, id}
		return func(port string) SwitchPort { return SwitchPort{Switch: name, MAC: mac, Port: port} }
	}
	leafA := sw("sw-leaf-a", 1)
	rail0, rail1 := sw("sw-rail-0", 3), sw("sw-rail-1", 4)
	rack1 := &NVLinkDomain{ClusterUUID: "7c3f0e2a9b1d4e6f8a2c3b4d5e6f7081", Clique: 1}
	rack2 := &NVLinkDomain{ClusterUUID: "1e5d7a9c0b2f4c6e8d0a1b3c5e7f9012", Clique: 1}
	tray := func(name, port string, rack *NVLinkDomain) SimNode {
		return SimNode{Name: name, Ports: []SwitchPort{leafA(port)}, GPUs: 4, GPUModel: "NVIDIA GB200", NVLink: rack}
	}
	hgx := func(name, port string) SimNode {
		return SimNode{Name: name, Ports: []SwitchPort{rail0(port), rail1(port)}, GPUs: 8, GPUModel: "NVIDIA H100 80GB HBM3"}
	}
	f := Fabric{
		Nodes: []SimNode{
			tray("gpu-a1", "Ethernet1/1", rack1),
			tray("gpu-a2", "Ethernet1/2", rack1),
			tray("gpu-a3", "Ethernet1/3", rack1),
			tray("gpu-a4", "Ethernet1/4", rack2),
			tray("gpu-a5", "Ethernet1/5", rack2),
			tray("gpu-a6", "Ethernet1/6", rack2),
			hgx("gpu-r1", "Ethernet1/1"),
			hgx("gpu-r2", "Ethernet1/2"),
			{Name: "gpu-lonely"},
		},
		UFMDump:           filepath.Join(testenv.RepoRoot(), "sources", "ufm", "testdata", "railopt"),
		UFMStorageDevices: []string{"mlx5_8"},
		Gangs: []GangSpec{
			{Namespace: "demo", Name: "llm-pretrain", DP: 2, PP: 2, GPUs: 8},
			{Namespace: "demo", Name: "finetune", DP: 3, PP: 1, GPUs: 4},
		},
	}
	for i := 1; i <= 8; i++ {
		f.UFMNodes = append(f.UFMNodes, SimNode{Name: fmt.Sprintf("dgx-%02d", i), GPUs: 8, GPUModel: "NVIDIA H100 80GB HBM3"})
	}
	return f
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
