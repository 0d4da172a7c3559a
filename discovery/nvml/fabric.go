package nvml

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// FabricState is a GPU's multi-node NVLink fabric registration state.
type FabricState string

const (
	// FabricNotSupported means the GPU or its system has no multi-node NVLink fabric (e.g. DGX A100/H100).
	FabricNotSupported FabricState = "NotSupported"
	// FabricNotStarted means the GPU has not begun registering with the fabric manager.
	FabricNotStarted FabricState = "NotStarted"
	// FabricInProgress means registration with the fabric manager is under way.
	FabricInProgress FabricState = "InProgress"
	// FabricCompleted means registration finished; Fabric.Status says whether it succeeded.
	FabricCompleted FabricState = "Completed"
	// FabricUnknown means the state could not be read or NVML returned a value this probe does not know.
	FabricUnknown FabricState = "Unknown"
)

// Fabric is one GPU's multi-node NVLink fabric registration as NVML reports it.
type Fabric struct {
	// State is the registration state.
	State FabricState `json:"state"`
	// ClusterUUID is the fabric cluster's UUID in canonical 8-4-4-4-12 lower-case form; empty when NVML
	// reported none (all zero bytes).
	ClusterUUID string `json:"clusterUUID,omitempty"`
	// CliqueID is the GPU's clique within the cluster.
	CliqueID uint32 `json:"cliqueID"`
	// Status is the nvmlReturn_t outcome of a Completed registration (0 is success); meaningless otherwise.
	Status uint32 `json:"status"`
}

// Domain is "<clusterUUID>.<cliqueId>", the form of the nvidia.com/gpu.clique label, or "" without a
// cluster UUID.
func (f Fabric) Domain() string {
	if f.ClusterUUID == "" {
		return ""
	}
	return fmt.Sprintf("%s.%d", f.ClusterUUID, f.CliqueID)
}

// readFabric reads a GPU's fabric registration: the versioned call first, the original call when the
// versioned one is unavailable. A driver with neither call predates multi-node NVLink: NotSupported.
func (p *Probe) readFabric(dev gonvml.Device, syms *symbols) (Fabric, error) {
	if syms.has(symGpuFabricInfoV) {
		info, ret, ok := p.fabricV(dev)
		if ok {
			switch ret {
			case gonvml.SUCCESS:
				return newFabric(info.ClusterUuid, info.CliqueId, info.State, info.Status), nil
			case gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_FUNCTION_NOT_FOUND, gonvml.ERROR_ARGUMENT_VERSION_MISMATCH:
				// Fall back to the original call below.
			default:
				return Fabric{State: FabricUnknown}, fmt.Errorf("read NVLink fabric info (versioned): %w", ret)
			}
		}
	}
	if syms.has(symGpuFabricInfo) {
		info, ret := dev.GetGpuFabricInfo()
		switch ret {
		case gonvml.SUCCESS:
			return newFabric(info.ClusterUuid, info.CliqueId, info.State, info.Status), nil
		case gonvml.ERROR_NOT_SUPPORTED:
			return Fabric{State: FabricNotSupported}, nil
		default:
			return Fabric{State: FabricUnknown}, fmt.Errorf("read NVLink fabric info: %w", ret)
		}
	}
	return Fabric{State: FabricNotSupported}, nil
}

// versionedFabricInfo asks for version 2 of the fabric info. go-nvml hands the versioned call out as a
// GpuFabricInfoHandler that only go-nvml itself can fill in; an nvml.Device of any other origin (every mock)
// returns the zero handler, whose V2 would call into C with a null device, so ok is false for it.
func versionedFabricInfo(dev gonvml.Device) (gonvml.GpuFabricInfo_v2, gonvml.Return, bool) {
	h := dev.GetGpuFabricInfoV()
	if h == (gonvml.GpuFabricInfoHandler{}) {
		return gonvml.GpuFabricInfo_v2{}, gonvml.ERROR_FUNCTION_NOT_FOUND, false
	}
	info, ret := h.V2()
	return info, ret, true
}

// newFabric builds a Fabric from NVML's raw fields.
func newFabric(clusterUUID [gonvml.GPU_FABRIC_UUID_LEN]uint8, cliqueID uint32, state uint8, status uint32) Fabric {
	f := Fabric{State: fabricState(state), CliqueID: cliqueID, Status: status}
	if clusterUUID != ([gonvml.GPU_FABRIC_UUID_LEN]uint8{}) {
		f.ClusterUUID = formatUUID(clusterUUID)
	}
	return f
}

// fabricState names NVML's GPU_FABRIC_STATE_* values.
func fabricState(s uint8) FabricState {
	switch s {
	case gonvml.GPU_FABRIC_STATE_NOT_SUPPORTED:
		return FabricNotSupported
	case gonvml.GPU_FABRIC_STATE_NOT_STARTED:
		return FabricNotStarted
	case gonvml.GPU_FABRIC_STATE_IN_PROGRESS:
		return FabricInProgress
	case gonvml.GPU_FABRIC_STATE_COMPLETED:
		return FabricCompleted
	default:
		return FabricUnknown
	}
}

// formatUUID prints 16 bytes as a canonical lower-case UUID, as GPU Feature Discovery prints the cluster
// UUID in its clique label.
func formatUUID(b [16]uint8) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
