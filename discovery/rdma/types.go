package rdma

import (
	"net/netip"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Link layers as the kernel names them in ports/N/link_layer.
const (
	LinkLayerInfiniBand = "InfiniBand"
	LinkLayerEthernet   = "Ethernet"
)

// GID types as the kernel names them in ports/N/gid_attrs/types/M. InfiniBand GIDs share the RoCE v1 name.
const (
	GIDTypeIBRoCEv1 = "IB/RoCE v1"
	GIDTypeRoCEv2   = "RoCE v2"
)

// Report is everything one scan of the RDMA sysfs tree found.
type Report struct {
	// Root is the sysfs root that was scanned.
	Root string
	// Devices are the RDMA devices, in natural name order (mlx5_2 before mlx5_10).
	Devices []Device
	// NotApplicable, when non-empty, says why the node has no RDMA device to report.
	NotApplicable string
	// Warnings are the problems met on the way, each naming its file.
	Warnings []string
}

// Device is one RDMA device (an InfiniBand HCA or a RoCE NIC function) as sysfs shows it.
type Device struct {
	// Name is the kernel's device name (mlx5_0).
	Name string
	// NodeGUID is the node GUID; zero when unknown.
	NodeGUID uint64
	// SysImageGUID is the system image GUID (shared by the functions of one adapter); zero when unknown.
	SysImageGUID uint64
	// PCIAddress is the PCI function the device belongs to ("0000:18:00.0"); empty when not on PCI.
	PCIAddress string
	// PCIPath is the device's place in the PCI tree, from the host bridge down to PCIAddress
	// (["pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0"]).
	PCIPath []string
	// NUMANode is the NUMA node of the PCI function; -1 when unknown.
	NUMANode int
	// NearestGPU is the NVIDIA GPU nearest to the device on the PCI tree; nil when there is none.
	NearestGPU *GPUAffinity
	// Auxiliary is the auxiliary-bus device the RDMA device sits on, below its PCI function ("mlx5_core.sf.4":
	// an mlx5 sub-function); empty when it sits on the PCI function itself.
	Auxiliary string
	// PhysFn is the PCI address of the physical function when the device's PCI function is an SR-IOV virtual
	// function of it; empty otherwise (a virtual machine's pass-through VF has no physical function in sight,
	// and counts as physical).
	PhysFn string
	// CharDevices are the device's character devices under /dev/infiniband by name (issm0, umad0, uverbs0):
	// the umad device is what the ibnetdiscover probe needs in its container. From rdmamap, when
	// Options.CharDevices asks; none on a fixture tree.
	CharDevices []string
	// Ports are the device's ports in number order.
	Ports []Port
}

// Virtual tells whether the device is a sub-function or an SR-IOV virtual function of a physical function on
// this node: it shares that function's cable, so the report leaves it out (it would count one link twice) and
// its health is not judged.
func (d Device) Virtual() bool { return d.Auxiliary != "" || d.PhysFn != "" }

// Port is one port of an RDMA device.
type Port struct {
	// Number is the port number (from 1).
	Number int
	// GUID is the port GUID (the low 64 bits of GID 0 of an InfiniBand port); zero when unknown or not
	// InfiniBand.
	GUID uint64
	// LinkLayer is LinkLayerInfiniBand or LinkLayerEthernet.
	LinkLayer string
	// State is the logical state name (ACTIVE, DOWN, INIT, ARMED); StateID its number.
	State   string
	StateID int
	// PhysState is the physical state name (LinkUp, Polling, Disabled); PhysStateID its number.
	PhysState   string
	PhysStateID int
	// Rate is the rate as the kernel prints it ("400 Gb/sec (4X NDR)"); RateGbps its number and Width its
	// width ("4X"; "" when the kernel names none).
	Rate     string
	RateGbps float64
	Width    string
	// LID and SMLID are the port's LID and its subnet manager's LID (zero on Ethernet).
	LID   uint16
	SMLID uint16
	// GIDs are the port's non-zero GIDs in index order.
	GIDs []GID
	// NetDev is the port's network interface: the one its GIDs name, else the PCI function's.
	NetDev string
	// Class is the port's class under the probe's rules.
	Class v1alpha1.PortClass
	// Counters are the port's counters by file name (symbol_error from counters/, out_of_sequence from
	// hw_counters/, …), from rdmamap; nil when unknown (a fixture tree, or a virtual device).
	Counters map[string]uint64
}

// GID is one non-zero entry of a port's GID table.
type GID struct {
	// Index is the GID table index.
	Index int
	// Addr is the GID as a 128-bit address (an IPv4-mapped address for a RoCE GID of an IPv4 address).
	Addr netip.Addr
	// Type is GIDTypeIBRoCEv1 or GIDTypeRoCEv2; empty when the kernel does not say.
	Type string
	// NetDev is the network interface the GID belongs to (RoCE only).
	NetDev string
}

// String prints the GID in the kernel's full form.
func (g GID) String() string { return formatGID(g.Addr) }

// AffinityLevel says how close a GPU is to an RDMA device on the PCI tree.
type AffinityLevel string

const (
	// AffinitySwitch: the two share a PCIe switch (their deepest common ancestor is below a root port).
	AffinitySwitch AffinityLevel = "switch"
	// AffinityRootPort: the two share a root port but no switch below it.
	AffinityRootPort AffinityLevel = "root-port"
	// AffinityHostBridge: the two share only the host bridge (PCI root complex).
	AffinityHostBridge AffinityLevel = "host-bridge"
)

// GPUAffinity is the GPU nearest to an RDMA device on the PCI tree.
type GPUAffinity struct {
	// PCIAddress is the chosen GPU's PCI address: the lowest of Candidates.
	PCIAddress string
	// Level is how close the GPU is.
	Level AffinityLevel
	// Ancestor is the deepest common ancestor in the PCI tree (a bridge's PCI address or "pciDDDD:BB").
	Ancestor string
	// Candidates are all GPUs equally near, in address order; more than one means the rail is ambiguous.
	Candidates []string
}
