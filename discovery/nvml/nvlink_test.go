package nvml

import (
	"context"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"
)

// TestNVLinkPeers checks the per-link view: peers that are GPUs of the node are resolved to their index,
// NOT_SUPPORTED and out-of-range links are silent, other failures become one warning per GPU.
func TestNVLinkPeers(t *testing.T) {
	// Two PCIe GPUs joined by an NVLink bridge (links 0-3 of each lead to the other), and a third GPU
	// without NVLink at all.
	a := fakeGPU{uuid: "GPU-a", name: "NVIDIA A40", busID: "00000000:17:00.0", numa: 0, fabricRet: gonvml.ERROR_NOT_SUPPORTED}.newDevice()
	b := fakeGPU{uuid: "GPU-b", name: "NVIDIA A40", busID: "00000000:65:00.0", numa: 0, fabricRet: gonvml.ERROR_NOT_SUPPORTED}.newDevice()
	c := fakeGPU{uuid: "GPU-c", name: "NVIDIA L4", busID: "00000000:CA:00.0", numa: 1, fabricRet: gonvml.ERROR_NOT_SUPPORTED}.newDevice()
	bridge := func(failLink int) func(int) (gonvml.EnableState, gonvml.Return) {
		return func(link int) (gonvml.EnableState, gonvml.Return) {
			switch {
			case link == failLink:
				return 0, gonvml.ERROR_UNKNOWN
			case link < 4:
				return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
			case link < 6:
				return gonvml.FEATURE_DISABLED, gonvml.SUCCESS // present but down
			default:
				return 0, gonvml.ERROR_INVALID_ARGUMENT
			}
		}
	}
	a.GetNvLinkStateFunc = bridge(-1)
	a.GetNvLinkRemotePciInfoFunc = func(int) (gonvml.PciInfo, gonvml.Return) { return pciInfo("00000000:65:00.0"), gonvml.SUCCESS }
	a.GetNvLinkRemoteDeviceTypeFunc = func(int) (gonvml.IntNvLinkDeviceType, gonvml.Return) {
		return gonvml.NVLINK_DEVICE_TYPE_GPU, gonvml.SUCCESS
	}
	b.GetNvLinkStateFunc = bridge(5)
	b.GetNvLinkRemotePciInfoFunc = func(int) (gonvml.PciInfo, gonvml.Return) { return pciInfo("00000000:17:00.0"), gonvml.SUCCESS }
	b.GetNvLinkRemoteDeviceTypeFunc = func(l int) (gonvml.IntNvLinkDeviceType, gonvml.Return) {
		if l == 3 {
			return 0, gonvml.ERROR_TIMEOUT
		}
		return gonvml.NVLINK_DEVICE_TYPE_GPU, gonvml.SUCCESS
	}
	c.GetNvLinkStateFunc = func(int) (gonvml.EnableState, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }

	inv, err := New(Options{Library: newLib(a, b, c)}).Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	peer := func(link int, bus, typ string, idx int) NVLink {
		return NVLink{Link: link, RemotePCIBusID: bus, RemoteType: typ, RemoteGPUIndex: idx}
	}
	want := [][]NVLink{
		{peer(0, "0000:65:00.0", "GPU", 1), peer(1, "0000:65:00.0", "GPU", 1), peer(2, "0000:65:00.0", "GPU", 1), peer(3, "0000:65:00.0", "GPU", 1)},
		{peer(0, "0000:17:00.0", "GPU", 0), peer(1, "0000:17:00.0", "GPU", 0), peer(2, "0000:17:00.0", "GPU", 0), peer(3, "0000:17:00.0", "", 0)},
		nil,
	}
	for i, g := range inv.GPUs {
		if diff := cmp.Diff(want[i], g.NVLinks); diff != "" {
			t.Errorf("GPU %d NVLinks (-want +got):\n%s", i, diff)
		}
		if g.ActiveNVLinks != len(want[i]) {
			t.Errorf("GPU %d ActiveNVLinks = %d, want %d", i, g.ActiveNVLinks, len(want[i]))
		}
	}
	wantWarn := []string{"GPU 1 (GPU-b): NVLink queries failed: link 3 remote device type: ERROR_TIMEOUT; link 5 state: ERROR_UNKNOWN"}
	if diff := cmp.Diff(wantWarn, inv.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
	if inv.NVLinkDomain != "" {
		t.Errorf("NVLinkDomain = %q, want empty", inv.NVLinkDomain)
	}
}
