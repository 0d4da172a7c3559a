package v1alpha1

// Limits of one report, as the CRD enforces them: the MaxItems and MaxLength markers on the types, which must be
// literals, as constants for the code that writes or reads reports (TestLimitsMatchTheCRD keeps the two in
// step). They bound what one node's report can put before the aggregator however broken or hostile its writer,
// and are generous for real hardware: a GPU node has 4 to 16 GPUs, 8 to 20 RDMA devices of one or two ports, and
// one neighbour per link and probe that sees it. The agent stays further inside them.
const (
	// MaxGPUs is the most GPUs a report lists (spec.gpus).
	MaxGPUs = 64
	// MaxRDMADevices is the most RDMA devices a report lists (spec.rdmaDevices).
	MaxRDMADevices = 64
	// MaxPortsPerDevice is the most ports an RDMA device lists (spec.rdmaDevices[].ports).
	MaxPortsPerDevice = 16
	// MaxGIDsPerPort is the most GIDs a port lists (spec.rdmaDevices[].ports[].gids).
	MaxGIDsPerPort = 64
	// MaxCharDevicesPerDevice is the most character devices an RDMA device lists (spec.rdmaDevices[].charDevices).
	MaxCharDevicesPerDevice = 8
	// MaxNeighbors is the most link neighbours a report lists (spec.neighbors).
	MaxNeighbors = 512
	// MaxProbes is the most probe conditions a report's status lists (status.probes).
	MaxProbes = 32
	// MaxSwitchIDLength is the longest switch identifier or name a neighbour gives (chassisID, portID,
	// systemName): LLDP's own bound on those TLVs, 255 octets.
	MaxSwitchIDLength = 255
	// MaxCloudLayers is the most network layers a report's cloud instance lists (spec.cloud.layers).
	MaxCloudLayers = 8
	// MaxCloudIDLength is the longest string of a report's cloud instance: its ID, zone, each layer and its
	// NVLink domain (spec.cloud.instanceID, zone, layers[], nvlinkDomain).
	MaxCloudIDLength = 255
)
