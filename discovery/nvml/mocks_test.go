package nvml

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// fakeGPU describes one mocked GPU; newDevice turns it into a go-nvml mock.Device.
type fakeGPU struct {
	uuid      string
	uuidRet   gonvml.Return // non-SUCCESS makes GetUUID fail
	name      string
	busID     string // as NVML prints it, e.g. "00000008:01:00.0"
	numa      int    // NVML's NUMA answer; negative means NOT_SUPPORTED
	fabric    gonvml.GpuFabricInfo
	fabricRet gonvml.Return
	chassis   string // the chassis serial number NVML's platform info gives; "" for none
	links     int    // links 0..links-1 are active and lead to NVSwitches whose PCI address NVML does not report
}

// pciInfo builds the PciInfo NVML would return for busID.
func pciInfo(busID string) gonvml.PciInfo {
	var info gonvml.PciInfo
	for i := 0; i < len(busID) && i < len(info.BusId)-1; i++ {
		info.BusId[i] = int8(busID[i])
	}
	return info
}

// newDevice builds a mock.Device answering every call the probe makes.
func (f fakeGPU) newDevice() *mock.Device {
	return &mock.Device{
		GetUUIDFunc: func() (string, gonvml.Return) {
			if f.uuidRet != gonvml.SUCCESS {
				return "", f.uuidRet
			}
			return f.uuid, gonvml.SUCCESS
		},
		GetNameFunc:    func() (string, gonvml.Return) { return f.name, gonvml.SUCCESS },
		GetPciInfoFunc: func() (gonvml.PciInfo, gonvml.Return) { return pciInfo(f.busID), gonvml.SUCCESS },
		GetNumaNodeIdFunc: func() (int, gonvml.Return) {
			if f.numa < 0 {
				return 0, gonvml.ERROR_NOT_SUPPORTED
			}
			return f.numa, gonvml.SUCCESS
		},
		// A mock cannot build a working versioned handler; the probe must notice and use the original call.
		GetGpuFabricInfoVFunc: func() gonvml.GpuFabricInfoHandler { return gonvml.GpuFabricInfoHandler{} },
		GetGpuFabricInfoFunc:  func() (gonvml.GpuFabricInfo, gonvml.Return) { return f.fabric, f.fabricRet },
		GetPlatformInfoFunc: func() (gonvml.PlatformInfo, gonvml.Return) {
			var info gonvml.PlatformInfo
			copy(info.ChassisSerialNumber[:], f.chassis)
			return info, gonvml.SUCCESS
		},
		GetNvLinkStateFunc: func(link int) (gonvml.EnableState, gonvml.Return) {
			if link < f.links {
				return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
			}
			return gonvml.FEATURE_DISABLED, gonvml.ERROR_INVALID_ARGUMENT
		},
		GetNvLinkRemotePciInfoFunc: func(int) (gonvml.PciInfo, gonvml.Return) {
			return gonvml.PciInfo{}, gonvml.ERROR_NOT_SUPPORTED
		},
		GetNvLinkRemoteDeviceTypeFunc: func(int) (gonvml.IntNvLinkDeviceType, gonvml.Return) {
			return gonvml.NVLINK_DEVICE_TYPE_SWITCH, gonvml.SUCCESS
		},
	}
}

// newLib builds a mock NVML library holding devs, with every symbol present and Init/Shutdown succeeding.
func newLib(devs ...gonvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() gonvml.Return { return gonvml.SUCCESS },
		ShutdownFunc:       func() gonvml.Return { return gonvml.SUCCESS },
		DeviceGetCountFunc: func() (int, gonvml.Return) { return len(devs), gonvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (gonvml.Device, gonvml.Return) {
			if i < 0 || i >= len(devs) {
				return nil, gonvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], gonvml.SUCCESS
		},
		ExtensionsFunc: func() gonvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
		},
	}
}

// completed is the fabric info of a GPU registered into cluster/clique.
func completed(cluster [16]byte, clique uint32) gonvml.GpuFabricInfo {
	return gonvml.GpuFabricInfo{ClusterUuid: cluster, CliqueId: clique, State: gonvml.GPU_FABRIC_STATE_COMPLETED}
}

// gb200TrayBusIDs are the PCI addresses of the four GPUs of a GB200 NVL72 compute tray, as NVML prints them.
var gb200TrayBusIDs = [4]string{"00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0"}

// gb200Tray builds the four GPUs of one GB200 NVL72 compute tray, each with 18 active NVLinks to the rack's
// NVSwitch trays and the given fabric registration.
func gb200Tray(rack, tray int, fabrics [4]gonvml.GpuFabricInfo) []gonvml.Device {
	devs := make([]gonvml.Device, 0, 4)
	for i := 0; i < 4; i++ {
		devs = append(devs, fakeGPU{
			uuid:      trayGPUUUID(rack, tray, i),
			name:      "NVIDIA GB200",
			busID:     gb200TrayBusIDs[i],
			numa:      i / 2,
			fabric:    fabrics[i],
			fabricRet: gonvml.SUCCESS,
			links:     18,
		}.newDevice())
	}
	return devs
}

// trayGPUUUID is a deterministic GPU UUID for GPU i of a tray.
func trayGPUUUID(rack, tray, i int) string {
	return fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", rack, tray*16+i)
}

// fourOf repeats one fabric info for the four GPUs of a tray.
func fourOf(f gonvml.GpuFabricInfo) [4]gonvml.GpuFabricInfo {
	return [4]gonvml.GpuFabricInfo{f, f, f, f}
}
