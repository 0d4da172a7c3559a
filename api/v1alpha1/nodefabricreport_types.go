package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeFabricReport is what one node's agent saw of the fabric around it: its GPUs and NVLink domain, its RDMA
// devices and ports, its link neighbours and, on a cloud, its instance. There is one report per node, named after
// the node.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodefabricreports,shortName=nfr,scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NVLink",type=string,JSONPath=`.spec.nvlinkDomain`
// +kubebuilder:printcolumn:name="GPUs",type=integer,JSONPath=`.spec.gpuCount`
// +kubebuilder:printcolumn:name="Neighbors",type=integer,JSONPath=`.status.neighborCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeFabricReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the probes observed.
	Spec NodeFabricReportSpec `json:"spec,omitempty"`
	// Status says how each probe fared.
	Status NodeFabricReportStatus `json:"status,omitempty"`
}

// NodeFabricReportSpec carries the node's observations, each item tagged with the source that saw it. Every list
// and string is bounded (MaxGPUs, MaxRDMADevices, …), so one report can only say so much: at most 64 GPUs, 64 RDMA
// devices of at most 16 ports each, and 512 neighbours.
type NodeFabricReportSpec struct {
	// GPUCount is the number of GPUs the node has. It is always written, also when 0: server-side apply turns
	// a spec with no field left into null, which the schema refuses.
	// +optional
	GPUCount int32 `json:"gpuCount"`
	// GPUs lists the node's GPUs: at most 64.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	GPUs []GPU `json:"gpus,omitempty"`
	// NVLinkDomain is the node's NVLink domain as "<clusterUUID>.<cliqueId>" (the value GPU Feature Discovery
	// puts in nvidia.com/gpu.clique); empty when the GPUs are not part of a multi-node NVLink fabric.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	NVLinkDomain string `json:"nvlinkDomain,omitempty"`
	// NVLinkSubDomain is the part of NVLinkDomain the node sits in, when the domain spans racks (a GB200/GB300
	// NVL72 over two racks): the chassis (rack) identifier NVML's platform info gives every GPU of the node.
	// Empty when unknown or without NVLinkDomain.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	NVLinkSubDomain string `json:"nvlinkSubDomain,omitempty"`
	// RDMADevices lists the node's RDMA devices (InfiniBand HCAs and RoCE NICs) with their ports: at most 64.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	RDMADevices []RDMADevice `json:"rdmaDevices,omitempty"`
	// Neighbors lists the switch ports the node's links reach, one per link and probe that sees it: at most 512.
	// +optional
	// +kubebuilder:validation:MaxItems=512
	// +listType=atomic
	Neighbors []LinkNeighbor `json:"neighbors,omitempty"`
	// Cloud is the node's cloud instance as its provider's instance metadata service describes it (the cloud
	// probe): the provider, the instance's ID and zone, and the node's place in the provider's network where
	// the metadata service gives it. Nil off a cloud, or when the probe is off.
	// +optional
	Cloud *CloudInstance `json:"cloud,omitempty"`
}

// CloudProvider names a cloud whose instance metadata the agent reads.
// +kubebuilder:validation:Enum=aws;gcp;oci
type CloudProvider string

// Cloud providers.
const (
	// CloudAWS is Amazon EC2 (IMDSv2).
	CloudAWS CloudProvider = "aws"
	// CloudGCP is Google Compute Engine.
	CloudGCP CloudProvider = "gcp"
	// CloudOCI is Oracle Cloud Infrastructure (IMDS v2).
	CloudOCI CloudProvider = "oci"
)

// CloudInstance is the node's own cloud instance, as its instance metadata service gives it. Every value is the
// provider's own, unchanged, so that sources reading the provider's API join nodes by InstanceID without
// guessing. Every string is at most 255 characters (MaxCloudIDLength).
type CloudInstance struct {
	// Provider is the cloud: aws, gcp or oci.
	Provider CloudProvider `json:"provider"`
	// InstanceID is the provider's ID of the instance: an EC2 instance ID (i-…), a Compute Engine instance's
	// numeric ID, an OCI instance OCID (ocid1.instance.…).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	InstanceID string `json:"instanceID"`
	// Zone is the instance's zone: the EC2 Availability Zone (us-east-1a), the Compute Engine zone
	// (us-central1-a), the OCI availability domain (Uocm:PHX-AD-1).
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Zone string `json:"zone,omitempty"`
	// Layers are the node's place in the provider's network, top first, each the provider's ID of the group of
	// hosts at that layer the node sits in; nodes sharing a longer prefix are closer. Compute Engine gives
	// cluster, block, sub-block (physical_host_topology); OCI gives HPC island, network block, local block
	// (rdmaTopologyData). Empty when the metadata service gives none (always on AWS). At most 8 (MaxCloudLayers).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	// +listType=atomic
	Layers []string `json:"layers,omitempty"`
	// NVLinkDomain is the provider's ID of the multi-node NVLink domain the node belongs to: OCI's GPU memory
	// fabric (customerGpuMemoryFabric), or the sub-block of a Compute Engine A4X or A4X Max instance. Empty when
	// the provider gives none. It names the same group as spec.nvlinkDomain, which NVML gives, in the
	// provider's words.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	NVLinkDomain string `json:"nvlinkDomain,omitempty"`
}

// GPU describes one GPU as NVML reports it.
type GPU struct {
	// Index is the NVML device index.
	Index int32 `json:"index"`
	// UUID is the GPU's UUID ("GPU-…").
	// +kubebuilder:validation:MaxLength=64
	UUID string `json:"uuid"`
	// Model is the product name.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Model string `json:"model,omitempty"`
	// PCIBusID is the GPU's PCI address (domain:bus:device.function).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PCIBusID string `json:"pciBusID,omitempty"`
	// NUMANode is the NUMA node the GPU is attached to, when known.
	// +optional
	NUMANode *int32 `json:"numaNode,omitempty"`
	// ClusterUUID is the NVLink fabric cluster UUID, when the GPU is part of a multi-node NVLink fabric.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ClusterUUID string `json:"clusterUUID,omitempty"`
	// CliqueID is the NVLink clique within ClusterUUID.
	// +optional
	CliqueID *int64 `json:"cliqueID,omitempty"`
	// FabricState is the NVLink fabric registration state (e.g. Completed, InProgress, NotSupported).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	FabricState string `json:"fabricState,omitempty"`
}

// RDMADevice is one InfiniBand HCA or RoCE NIC.
type RDMADevice struct {
	// Name is the kernel's device name (e.g. mlx5_0).
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// NodeGUID is the device's node GUID, as "0x" and 16 hex digits.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	NodeGUID string `json:"nodeGUID,omitempty"`
	// SystemImageGUID is the device's system image GUID, as "0x" and 16 hex digits.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	SystemImageGUID string `json:"systemImageGUID,omitempty"`
	// PCIAddress is the device's PCI address.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PCIAddress string `json:"pciAddress,omitempty"`
	// NUMANode is the NUMA node of the device, when known.
	// +optional
	NUMANode *int32 `json:"numaNode,omitempty"`
	// NearestGPU is the UUID of the GPU closest to this device on the PCI tree (its rail).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	NearestGPU string `json:"nearestGPU,omitempty"`
	// Ports lists the device's ports: at most 16.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Ports []RDMAPort `json:"ports,omitempty"`
	// CharDevices are the device's character devices under /dev/infiniband (e.g. issm0, umad0, uverbs0): the
	// ibnetdiscover probe needs the umad one in the agent's pod. At most 8, each at most 16 characters.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=16
	// +listType=atomic
	CharDevices []string `json:"charDevices,omitempty"`
}

// RDMAPort is one port of an RDMA device.
type RDMAPort struct {
	// Number is the port number (from 1).
	Number int32 `json:"number"`
	// GUID is the port GUID, as "0x" and 16 hex digits.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	GUID string `json:"guid,omitempty"`
	// LinkLayer is InfiniBand or Ethernet.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	LinkLayer string `json:"linkLayer,omitempty"`
	// State is the logical port state (e.g. ACTIVE, DOWN).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	State string `json:"state,omitempty"`
	// PhysState is the physical port state (e.g. LinkUp, Disabled).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PhysState string `json:"physState,omitempty"`
	// Rate is the link rate as the kernel prints it (e.g. "400 Gb/sec (4X NDR)").
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Rate string `json:"rate,omitempty"`
	// LID is the port's local identifier (InfiniBand).
	// +optional
	LID int32 `json:"lid,omitempty"`
	// SMLID is the LID of the subnet manager the port sees (InfiniBand).
	// +optional
	SMLID int32 `json:"smLID,omitempty"`
	// GIDs lists the port's non-empty GIDs (for RoCE v2, the IPv4-mapped and IPv6 GIDs), each as the kernel
	// prints it: eight groups of four hex digits, 39 characters. At most 64.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=39
	// +listType=atomic
	GIDs []string `json:"gids,omitempty"`
	// NetDev is the network interface of a RoCE port.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	NetDev string `json:"netDev,omitempty"`
	// Class is compute or storage; storage rails never merge compute domains.
	// +optional
	Class PortClass `json:"class,omitempty"`
	// RateGbps is the trained link rate in Gb/s, read from Rate (e.g. 400); 0 when not known.
	// +optional
	RateGbps int32 `json:"rateGbps,omitempty"`
	// Width is the trained link width (e.g. "4X"); empty when not known.
	// +optional
	// +kubebuilder:validation:MaxLength=8
	Width string `json:"width,omitempty"`
	// Health is the port's link health as the agent judges it from its state, its trained rate and width and
	// its error counters between cycles; nil when it was not judged. It changes only when the condition or its
	// reason does, so a report is not rewritten for counters that tick.
	// +optional
	Health *LinkHealth `json:"health,omitempty"`
}

// LinkCondition is a port's link health: Healthy, Degraded or Down.
// +kubebuilder:validation:Enum=Healthy;Degraded;Down
type LinkCondition string

// Link conditions.
const (
	// LinkHealthy is a port that is up, trained as it can and not erring.
	LinkHealthy LinkCondition = "Healthy"
	// LinkDegraded is a port that is up but slower or narrower than it can be, erring or flapping.
	LinkDegraded LinkCondition = "Degraded"
	// LinkDown is a port whose link is not up.
	LinkDown LinkCondition = "Down"
)

// Reasons of a port's link health that the agent and fabric health both know. An error counter's reason is its
// name in CamelCase (symbol_error: SymbolErrors, see the rdma probe).
const (
	// ReasonPortDown: the port is not ACTIVE and LinkUp.
	ReasonPortDown = "PortDown"
	// ReasonLinkDowned: the link went down since the last cycle.
	ReasonLinkDowned = "LinkDowned"
	// ReasonFlapping: the link went down several times within the window.
	ReasonFlapping = "Flapping"
	// ReasonSlowerThanCapable: the link trained at a lower rate than the port can.
	ReasonSlowerThanCapable = "SlowerThanCapable"
	// ReasonNarrowerThanCapable: the link trained narrower than the port can.
	ReasonNarrowerThanCapable = "NarrowerThanCapable"
)

// LinkHealth is a port's link health and why.
type LinkHealth struct {
	// Condition is Healthy, Degraded or Down.
	Condition LinkCondition `json:"condition"`
	// Reason is one CamelCase word saying why (e.g. SymbolErrors, LinkDowned, Flapping, SlowerThanCapable,
	// NarrowerThanCapable, PortDown); empty when Healthy.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`
	// Message says it for a person, with the figures seen when the condition began.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
	// Since is when the condition (and its reason) began, as the agent saw it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// PortClass tells whether a link carries compute (training) traffic or storage traffic.
// +kubebuilder:validation:Enum=compute;storage
type PortClass string

const (
	// PortClassCompute marks a link of the compute fabric.
	PortClassCompute PortClass = "compute"
	// PortClassStorage marks a link of a storage network.
	PortClassStorage PortClass = "storage"
)

// NeighborSource names the probe that saw a neighbour.
// +kubebuilder:validation:Enum=lldp;lldpd;ibnetdiscover;sysfs
type NeighborSource string

const (
	// SourceLLDP is the agent's own LLDP listener.
	SourceLLDP NeighborSource = "lldp"
	// SourceLLDPD is a host lldpd queried through lldpcli.
	SourceLLDPD NeighborSource = "lldpd"
	// SourceIBNetDiscover is the output of ibnetdiscover.
	SourceIBNetDiscover NeighborSource = "ibnetdiscover"
	// SourceSysfs is the kernel's RDMA sysfs tree.
	SourceSysfs NeighborSource = "sysfs"
)

// LinkNeighbor is the far end of one of the node's links: a switch port seen through LLDP or an InfiniBand
// switch seen through the fabric.
type LinkNeighbor struct {
	// Source is the probe that saw this neighbour.
	Source NeighborSource `json:"source"`
	// Interface is the local end: a network interface, or an RDMA device and port ("mlx5_0/1").
	// +kubebuilder:validation:MaxLength=64
	Interface string `json:"interface"`
	// ChassisID identifies the neighbouring switch (LLDP chassis ID, or the switch's node GUID for InfiniBand):
	// 1 to 255 characters, LLDP's bound.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	ChassisID string `json:"chassisID"`
	// ChassisIDSubtype is the LLDP chassis ID subtype (e.g. mac, local, ifName) or "guid" for InfiniBand.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ChassisIDSubtype string `json:"chassisIDSubtype,omitempty"`
	// PortID identifies the switch port: at most 255 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	PortID string `json:"portID,omitempty"`
	// PortIDSubtype is the LLDP port ID subtype (e.g. ifName, mac, local) or "number" for InfiniBand.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PortIDSubtype string `json:"portIDSubtype,omitempty"`
	// SystemName is the switch's name: at most 255 characters, LLDP's bound.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	SystemName string `json:"systemName,omitempty"`
	// PortDescription is the switch's description of its port.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	PortDescription string `json:"portDescription,omitempty"`
	// SystemDescription is the switch's description of itself.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	SystemDescription string `json:"systemDescription,omitempty"`
	// ManagementAddress is the switch's management address.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ManagementAddress string `json:"managementAddress,omitempty"`
	// PortVLANID is the port VLAN ID (PVID) the switch announces for its port in LLDP's IEEE 802.1 Port VLAN ID
	// TLV: the VLAN of the frames the node sends untagged. 0 (omitted) when not announced.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4094
	PortVLANID int32 `json:"portVLANID,omitempty"`
	// MaxFrameSize is the largest frame the switch port takes, in bytes, as LLDP's IEEE 802.3 Maximum Frame Size
	// TLV announces it: the port's MTU plus the Ethernet header and FCS (and an 802.1Q tag), e.g. 9216 for a
	// jumbo port. A node whose MTU is larger than MaxFrameSize less 18 (22 tagged) loses its large frames. 0
	// (omitted) when not announced.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	MaxFrameSize int32 `json:"maxFrameSize,omitempty"`
	// LinkAggregation is the link aggregation (LAG, bond) status the switch announces for its port in LLDP's
	// IEEE 802.1 or 802.3 Link Aggregation TLV; nil when not announced.
	// +optional
	LinkAggregation *LinkAggregation `json:"linkAggregation,omitempty"`
	// Class is compute or storage.
	// +optional
	Class PortClass `json:"class,omitempty"`
}

// LinkAggregation is the link aggregation status a switch announces for the port a node's link reaches.
type LinkAggregation struct {
	// Capable says that the port can be aggregated.
	Capable bool `json:"capable"`
	// Enabled says that the port is part of an aggregate (a port channel) now.
	Enabled bool `json:"enabled"`
	// PortID is the aggregate's identifier on the switch (its ifIndex), the same on every port of one aggregate;
	// 0 (omitted) when the port is not aggregated.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4294967295
	PortID int64 `json:"portID,omitempty"`
}

// NodeFabricReportStatus says how each probe fared in the agent's last cycle.
type NodeFabricReportStatus struct {
	// Probes holds one entry per probe: at most 32.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Probes []ProbeCondition `json:"probes,omitempty"`
	// NeighborCount is the number of neighbours in the spec.
	// +optional
	NeighborCount int32 `json:"neighborCount,omitempty"`
	// Truncated is true when the agent dropped observations to keep the report within its size bounds.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// ProbeState is the outcome of a probe.
// +kubebuilder:validation:Enum=Available;Degraded;NotApplicable
type ProbeState string

const (
	// ProbeAvailable means the probe ran and its data is current.
	ProbeAvailable ProbeState = "Available"
	// ProbeDegraded means the probe failed; its last good data, if any, is kept and marked stale.
	ProbeDegraded ProbeState = "Degraded"
	// ProbeNotApplicable means the node has nothing for this probe to see (no GPU, no RDMA device, …).
	ProbeNotApplicable ProbeState = "NotApplicable"
)

// ProbeCondition is the state of one probe on the node.
type ProbeCondition struct {
	// Name is the probe's name (e.g. lldp, nvml, rdma).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// State is the probe's outcome.
	State ProbeState `json:"state"`
	// Reason is a one-word, CamelCase reason for State.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`
	// Message says what happened, in words.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when State last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// LastSuccessTime is when the probe last succeeded; data older than that is stale.
	// +optional
	LastSuccessTime *metav1.Time `json:"lastSuccessTime,omitempty"`
}

// NodeFabricReportList is a list of NodeFabricReports.
//
// +kubebuilder:object:root=true
type NodeFabricReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the reports.
	Items []NodeFabricReport `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeFabricReport{}, &NodeFabricReportList{})
}
