package wellknown

// Label styles: the families of node-label keys fabricmap can write (LabelKeys.Style, --label-style).
const (
	// LabelStyleTopographV1 is NVIDIA topograph v1's convention, the default: fabric.topograph.run/tier-N for
	// the switch tiers, tier-0 closest to the node (a leaf) and N growing outward, and
	// accelerator.topograph.run/domain and accelerator.topograph.run/sub-domain for the NVLink domain and
	// sub-domain.
	LabelStyleTopographV1 = "topograph-v1"
	// LabelStyleNVIDIAV0 is the keys fabricmap wrote by default before, from the network.topology.nvidia.com
	// family of topograph before v1 and of Koordinator's network-topology seed: network.topology.nvidia.com/block,
	// spine and datacenter for switch tiers 1, 2 and 3, network.topology.nvidia.com/accelerator for the NVLink
	// domain, and accelerator.topograph.run/sub-domain for the NVLink sub-domain.
	LabelStyleNVIDIAV0 = "nvidia-v0"
	// LabelStyleCustom takes the keys as given: --label-keys, --accelerator-label-key and
	// --accelerator-sub-domain-label-key, each defaulting to topograph v1's.
	LabelStyleCustom = "custom"
)

// LabelStyles lists the accepted values of LabelKeys.Style besides the empty one (custom).
var LabelStyles = []string{LabelStyleTopographV1, LabelStyleNVIDIAV0, LabelStyleCustom}

// Topograph v1's keys.
const (
	// TopographTierKeyPrefix followed by N is topograph's key for switch tier N, counted from 0 at the domain
	// closest to the node.
	TopographTierKeyPrefix = "fabric.topograph.run/tier-"
	// TopographTierCount is how many switch tiers LabelStyleTopographV1 labels: tier-0 to tier-7. Topograph
	// sets no maximum; a tree deeper than this leaves its higher tiers unlabelled (LabelStyleCustom can list
	// more keys). Eight keeps every key's number one digit, so the keys sort in tier order as strings too.
	TopographTierCount = 8
	// TopographAcceleratorDomainKey is topograph's key for the NVLink domain.
	TopographAcceleratorDomainKey = "accelerator.topograph.run/domain"
	// TopographAcceleratorSubDomainKey is topograph's key for the NVLink sub-domain (a rack of an NVLink domain
	// that spans racks); topograph writes it only beside the domain key, as NodeLabels does.
	TopographAcceleratorSubDomainKey = "accelerator.topograph.run/sub-domain"
)

// NVIDIAV0AcceleratorKey is LabelStyleNVIDIAV0's key for the NVLink domain.
const NVIDIAV0AcceleratorKey = "network.topology.nvidia.com/accelerator"

// NVIDIAV0TierKeys are LabelStyleNVIDIAV0's keys for switch tiers 1, 2 and 3: the leaf ("block"), the spine
// and the tier above ("datacenter").
var NVIDIAV0TierKeys = []string{
	"network.topology.nvidia.com/block",
	"network.topology.nvidia.com/spine",
	"network.topology.nvidia.com/datacenter",
}
