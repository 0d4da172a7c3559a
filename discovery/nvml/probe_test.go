package nvml

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

var testCluster = [16]byte{0x5f, 0x3c, 0x1e, 0x9a, 0x2b, 0x47, 0x4c, 0x1d, 0x9e, 0x2a, 0x61, 0x7b, 0x8c, 0x9d, 0x0e, 0x1f}

const testClusterUUID = "5f3c1e9a-2b47-4c1d-9e2a-617b8c9d0e1f"

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

// writeNUMA writes a sysfs fixture numa_node file for busID under root.
func writeNUMA(t *testing.T, root, busID, value string) {
	t.Helper()
	dir := filepath.Join(root, "bus", "pci", "devices", busID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "numa_node"), []byte(value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDGXA100 runs the probe against go-nvml's DGX A100 mock: eight A100s without a multi-node NVLink
// fabric, NUMA nodes from sysfs, twelve NVLinks per GPU to the board's NVSwitches.
func TestDGXA100(t *testing.T) {
	busIDs := []string{"00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
		"00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"}
	wantBus := []string{"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0",
		"0000:87:00.0", "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"}
	numa := []int32{3, 3, 1, 1, 7, 7, 5, 5}
	switches := []string{"00000000:C4:00.0", "00000000:C5:00.0", "00000000:C6:00.0",
		"00000000:C7:00.0", "00000000:C8:00.0", "00000000:C9:00.0"}

	root := t.TempDir()
	srv := dgxa100.New()
	for i, d := range srv.Devices {
		writeNUMA(t, root, wantBus[i], fmt.Sprint(numa[i]))
		dev := d.(*dgxa100.Device)
		bus := busIDs[i]
		// The mock leaves the PCI bus ID empty and the newer calls unset; give them what a DGX A100 answers.
		dev.GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
			info := pciInfo(bus)
			info.PciDeviceId = 0x20B010DE
			return info, gonvml.SUCCESS
		}
		dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
		dev.GetGpuFabricInfoVFunc = func() gonvml.GpuFabricInfoHandler { return gonvml.GpuFabricInfoHandler{} }
		dev.GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) {
			return gonvml.GpuFabricInfo{}, gonvml.ERROR_NOT_SUPPORTED
		}
		dev.GetNvLinkStateFunc = func(link int) (gonvml.EnableState, gonvml.Return) {
			if link < 12 {
				return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
			}
			return gonvml.FEATURE_DISABLED, gonvml.ERROR_INVALID_ARGUMENT
		}
		dev.GetNvLinkRemotePciInfoFunc = func(link int) (gonvml.PciInfo, gonvml.Return) {
			return pciInfo(switches[link/2]), gonvml.SUCCESS
		}
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (gonvml.IntNvLinkDeviceType, gonvml.Return) {
			return gonvml.NVLINK_DEVICE_TYPE_SWITCH, gonvml.SUCCESS
		}
	}

	p := New(Options{Library: srv, SysfsRoot: root})
	inv, err := p.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inv.NotApplicable != "" || inv.NVLinkDomain != "" || len(inv.Warnings) != 0 {
		t.Fatalf("NotApplicable=%q NVLinkDomain=%q Warnings=%q, want all empty", inv.NotApplicable, inv.NVLinkDomain, inv.Warnings)
	}
	res := inv.Result()
	var want []v1alpha1.GPU
	for i, d := range srv.Devices {
		want = append(want, v1alpha1.GPU{
			Index:       int32(i),
			UUID:        d.(*dgxa100.Device).UUID,
			Model:       "Mock NVIDIA A100-SXM4-40GB",
			PCIBusID:    wantBus[i],
			NUMANode:    i32(numa[i]),
			FabricState: "NotSupported",
		})
	}
	if diff := cmp.Diff(want, res.GPUs); diff != "" {
		t.Errorf("GPUs (-want +got):\n%s", diff)
	}
	for _, g := range inv.GPUs {
		if g.ActiveNVLinks != 12 || len(g.NVLinks) != 12 {
			t.Errorf("GPU %d: ActiveNVLinks=%d len(NVLinks)=%d, want 12", g.Index, g.ActiveNVLinks, len(g.NVLinks))
			continue
		}
		if want := (NVLink{Link: 11, RemotePCIBusID: "0000:c9:00.0", RemoteType: "Switch", RemoteGPUIndex: -1}); g.NVLinks[11] != want {
			t.Errorf("GPU %d link 11 = %+v, want %+v", g.Index, g.NVLinks[11], want)
		}
	}
	if n := len(srv.ShutdownCalls()); n != 1 {
		t.Errorf("Shutdown called %d times, want 1", n)
	}
}

// TestGB200NVL72Trays runs the probe on mocked GB200 NVL72 compute trays: four GPUs per tray, fabric
// registration Completed, one cluster UUID across racks and one clique per rack. Trays of one rack must give
// the same domain string, a tray of another rack a different one.
func TestGB200NVL72Trays(t *testing.T) {
	trays := []struct {
		name       string
		rack, tray int
		clique     uint32
		wantDomain string
	}{
		{"rack 1 tray 1", 1, 1, 7, testClusterUUID + ".7"},
		{"rack 1 tray 2", 1, 2, 7, testClusterUUID + ".7"},
		{"rack 2 tray 1", 2, 1, 8, testClusterUUID + ".8"},
	}
	domains := map[string]string{}
	for _, tc := range trays {
		t.Run(tc.name, func(t *testing.T) {
			lib := newLib(gb200Tray(tc.rack, tc.tray, fourOf(completed(testCluster, tc.clique)))...)
			res, err := New(Options{Library: lib, SysfsRoot: t.TempDir()}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.NVLinkDomain != tc.wantDomain {
				t.Errorf("NVLinkDomain = %q, want %q", res.NVLinkDomain, tc.wantDomain)
			}
			if len(res.Warnings) != 0 || res.NotApplicable != "" {
				t.Errorf("Warnings=%q NotApplicable=%q, want none", res.Warnings, res.NotApplicable)
			}
			wantBus := []string{"0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"}
			var want []v1alpha1.GPU
			for i := 0; i < 4; i++ {
				want = append(want, v1alpha1.GPU{
					Index:       int32(i),
					UUID:        trayGPUUUID(tc.rack, tc.tray, i),
					Model:       "NVIDIA GB200",
					PCIBusID:    wantBus[i],
					NUMANode:    i32(int32(i / 2)),
					ClusterUUID: testClusterUUID,
					CliqueID:    i64(int64(tc.clique)),
					FabricState: "Completed",
				})
			}
			if diff := cmp.Diff(want, res.GPUs); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
			domains[tc.name] = res.NVLinkDomain
		})
	}
	if domains["rack 1 tray 1"] != domains["rack 1 tray 2"] {
		t.Errorf("trays of one rack disagree: %q vs %q", domains["rack 1 tray 1"], domains["rack 1 tray 2"])
	}
	if domains["rack 1 tray 1"] == domains["rack 2 tray 1"] {
		t.Errorf("trays of different racks share domain %q", domains["rack 1 tray 1"])
	}

	// The NVLink view the report cannot hold yet: 18 active links per GPU, all to NVSwitches.
	inv, err := New(Options{Library: newLib(gb200Tray(1, 1, fourOf(completed(testCluster, 7)))...)}).Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range inv.GPUs {
		if g.ActiveNVLinks != 18 {
			t.Errorf("GPU %d: ActiveNVLinks = %d, want 18", g.Index, g.ActiveNVLinks)
		}
		if want := (NVLink{Link: 17, RemoteType: "Switch", RemoteGPUIndex: -1}); len(g.NVLinks) == 18 && g.NVLinks[17] != want {
			t.Errorf("GPU %d link 17 = %+v, want %+v", g.Index, g.NVLinks[17], want)
		}
	}
}

// lbl is how the probe names GPU i of rack 1 tray 1 in warnings.
func lbl(i int) string { return fmt.Sprintf("GPU %d (%s)", i, trayGPUUUID(1, 1, i)) }

// TestFabricStates covers the domain rules on one four-GPU tray whose GPUs report various fabric states.
func TestFabricStates(t *testing.T) {
	other := testCluster
	other[15] = 0xff
	const otherUUID = "5f3c1e9a-2b47-4c1d-9e2a-617b8c9d0eff"
	inProgress := gonvml.GpuFabricInfo{State: gonvml.GPU_FABRIC_STATE_IN_PROGRESS}
	notStarted := gonvml.GpuFabricInfo{State: gonvml.GPU_FABRIC_STATE_NOT_STARTED}
	notSupported := gonvml.GpuFabricInfo{State: gonvml.GPU_FABRIC_STATE_NOT_SUPPORTED}
	c7 := completed(testCluster, 7)
	failed := c7
	failed.Status = uint32(gonvml.ERROR_UNKNOWN)

	tests := []struct {
		name         string
		fabrics      [4]gonvml.GpuFabricInfo
		rets         [4]gonvml.Return
		wantDomain   string
		wantStates   [4]string
		wantWarnings []string
	}{
		{
			name:       "all completed",
			fabrics:    fourOf(c7),
			wantDomain: testClusterUUID + ".7",
			wantStates: [4]string{"Completed", "Completed", "Completed", "Completed"},
		},
		{
			name:       "registration in progress on some GPUs",
			fabrics:    [4]gonvml.GpuFabricInfo{c7, inProgress, c7, notStarted},
			wantStates: [4]string{"Completed", "InProgress", "Completed", "NotStarted"},
			wantWarnings: []string{"NVLink fabric registration not finished on " + lbl(1) + " InProgress, " +
				lbl(3) + " NotStarted; NVLink domain withheld"},
		},
		{
			name:       "registration in progress on all GPUs",
			fabrics:    fourOf(inProgress),
			wantStates: [4]string{"InProgress", "InProgress", "InProgress", "InProgress"},
			wantWarnings: []string{"NVLink fabric registration not finished on " + lbl(0) + " InProgress, " +
				lbl(1) + " InProgress, " + lbl(2) + " InProgress, " + lbl(3) + " InProgress; NVLink domain withheld"},
		},
		{
			name:       "fabric state NotSupported (HGX H100 without multi-node NVLink)",
			fabrics:    fourOf(notSupported),
			wantStates: [4]string{"NotSupported", "NotSupported", "NotSupported", "NotSupported"},
		},
		{
			name:       "fabric call NOT_SUPPORTED (pre-Hopper GPU)",
			rets:       [4]gonvml.Return{gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_NOT_SUPPORTED},
			wantStates: [4]string{"NotSupported", "NotSupported", "NotSupported", "NotSupported"},
		},
		{
			name:       "different cliques on one node",
			fabrics:    [4]gonvml.GpuFabricInfo{c7, c7, completed(testCluster, 8), completed(testCluster, 8)},
			wantStates: [4]string{"Completed", "Completed", "Completed", "Completed"},
			wantWarnings: []string{"conflict: GPUs of one node report different NVLink domains (clusterUUID.cliqueId): " +
				testClusterUUID + ".7 on " + lbl(0) + ", " + lbl(1) + "; " +
				testClusterUUID + ".8 on " + lbl(2) + ", " + lbl(3) + "; NVLink domain withheld"},
		},
		{
			name:       "different clusters on one node",
			fabrics:    [4]gonvml.GpuFabricInfo{c7, c7, c7, completed(other, 7)},
			wantStates: [4]string{"Completed", "Completed", "Completed", "Completed"},
			wantWarnings: []string{"conflict: GPUs of one node report different NVLink domains (clusterUUID.cliqueId): " +
				testClusterUUID + ".7 on " + lbl(0) + ", " + lbl(1) + ", " + lbl(2) + "; " +
				otherUUID + ".7 on " + lbl(3) + "; NVLink domain withheld"},
		},
		{
			name:       "completed with an all-zero cluster UUID",
			fabrics:    fourOf(completed([16]byte{}, 0)),
			wantStates: [4]string{"Completed", "Completed", "Completed", "Completed"},
			wantWarnings: []string{"NVLink fabric registration Completed with an all-zero cluster UUID on " +
				lbl(0) + ", " + lbl(1) + ", " + lbl(2) + ", " + lbl(3) + "; NVLink domain withheld"},
		},
		{
			name:       "completed with an error status",
			fabrics:    [4]gonvml.GpuFabricInfo{c7, c7, failed, c7},
			wantStates: [4]string{"Completed", "Completed", "Completed", "Completed"},
			wantWarnings: []string{"NVLink fabric registration Completed with an error on " + lbl(2) +
				" status 999 (ERROR_UNKNOWN); NVLink domain withheld"},
		},
		{
			name:       "fabric supported on some GPUs only",
			fabrics:    [4]gonvml.GpuFabricInfo{c7, c7, c7, notSupported},
			wantStates: [4]string{"Completed", "Completed", "Completed", "NotSupported"},
			wantWarnings: []string{"NVLink fabric not supported on " + lbl(3) +
				" while other GPUs of the node report one; NVLink domain withheld"},
		},
		{
			name:       "fabric info unreadable on one GPU, the others without fabric",
			fabrics:    fourOf(notSupported),
			rets:       [4]gonvml.Return{gonvml.ERROR_GPU_IS_LOST, gonvml.SUCCESS, gonvml.SUCCESS, gonvml.SUCCESS},
			wantStates: [4]string{"Unknown", "NotSupported", "NotSupported", "NotSupported"},
			wantWarnings: []string{
				lbl(0) + ": read NVLink fabric info: ERROR_GPU_IS_LOST",
				"NVLink fabric state unknown on " + lbl(0) + "; NVLink domain withheld",
			},
		},
		{
			name:       "fabric info unreadable on one GPU",
			fabrics:    fourOf(c7),
			rets:       [4]gonvml.Return{gonvml.SUCCESS, gonvml.ERROR_GPU_IS_LOST, gonvml.SUCCESS, gonvml.SUCCESS},
			wantStates: [4]string{"Completed", "Unknown", "Completed", "Completed"},
			wantWarnings: []string{
				lbl(1) + ": read NVLink fabric info: ERROR_GPU_IS_LOST",
				"NVLink fabric state unknown on " + lbl(1) + "; NVLink domain withheld",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devs := gb200Tray(1, 1, tc.fabrics)
			for i, d := range devs {
				if ret := tc.rets[i]; ret != gonvml.SUCCESS {
					d.(*mock.Device).GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) {
						return gonvml.GpuFabricInfo{}, ret
					}
				}
			}
			res, err := New(Options{Library: newLib(devs...)}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.NVLinkDomain != tc.wantDomain {
				t.Errorf("NVLinkDomain = %q, want %q", res.NVLinkDomain, tc.wantDomain)
			}
			if diff := cmp.Diff(tc.wantWarnings, res.Warnings); diff != "" {
				t.Errorf("Warnings (-want +got):\n%s", diff)
			}
			for i, g := range res.GPUs {
				if g.FabricState != tc.wantStates[i] {
					t.Errorf("GPU %d FabricState = %q, want %q", i, g.FabricState, tc.wantStates[i])
				}
			}
		})
	}
}

// TestNotApplicable checks that a node without library, driver or GPUs is reported as not applicable, not
// as a failure, and that NVML is shut down exactly when it was initialised.
func TestNotApplicable(t *testing.T) {
	t.Run("library not found (real go-nvml loader)", func(t *testing.T) {
		const path = "/nonexistent/fabricmap-test/libnvidia-ml.so.1"
		res, err := New(Options{LibraryPath: path}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.NotApplicable, path) || !strings.Contains(res.NotApplicable, "not found") {
			t.Errorf("NotApplicable = %q, want it to say %s was not found", res.NotApplicable, path)
		}
		if len(res.GPUs) != 0 {
			t.Errorf("GPUs = %v, want none", res.GPUs)
		}
	})

	tests := []struct {
		name          string
		initRet       gonvml.Return
		devices       int
		wantReason    string
		wantShutdowns int
	}{
		{"library not found (mock)", gonvml.ERROR_LIBRARY_NOT_FOUND, 4, "NVML library libnvidia-ml.so.1 not found (no NVIDIA driver installed?)", 0},
		{"driver not loaded", gonvml.ERROR_DRIVER_NOT_LOADED, 4, "NVIDIA kernel driver is not loaded", 0},
		{"zero devices", gonvml.SUCCESS, 0, "NVML reports no GPU on this node", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := newLib(gb200Tray(1, 1, fourOf(completed(testCluster, 1)))[:tc.devices]...)
			lib.InitFunc = func() gonvml.Return { return tc.initRet }
			res, err := New(Options{Library: lib}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.NotApplicable != tc.wantReason {
				t.Errorf("NotApplicable = %q, want %q", res.NotApplicable, tc.wantReason)
			}
			if n := len(lib.ShutdownCalls()); n != tc.wantShutdowns {
				t.Errorf("Shutdown called %d times, want %d", n, tc.wantShutdowns)
			}
		})
	}
}

// TestErrors checks that failures the probe cannot work around are errors naming the GPU, and that NVML is
// still shut down after a successful Init.
func TestErrors(t *testing.T) {
	tests := []struct {
		name          string
		mutate        func(lib *mock.Interface, devs []gonvml.Device)
		wantIn        string
		wantIs        error
		wantShutdowns int
	}{
		{
			name: "UUID read fails",
			mutate: func(_ *mock.Interface, devs []gonvml.Device) {
				devs[2].(*mock.Device).GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
			},
			wantIn: "GPU 2: read UUID: ERROR_GPU_IS_LOST", wantIs: gonvml.ERROR_GPU_IS_LOST, wantShutdowns: 1,
		},
		{
			name: "PCI info read fails",
			mutate: func(_ *mock.Interface, devs []gonvml.Device) {
				devs[1].(*mock.Device).GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
					return gonvml.PciInfo{}, gonvml.ERROR_UNKNOWN
				}
			},
			wantIn: "GPU 1 (" + trayGPUUUID(1, 1, 1) + "): read PCI info", wantIs: gonvml.ERROR_UNKNOWN, wantShutdowns: 1,
		},
		{
			name: "device handle fails",
			mutate: func(lib *mock.Interface, devs []gonvml.Device) {
				lib.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
					if i == 3 {
						return nil, gonvml.ERROR_GPU_IS_LOST
					}
					return devs[i], gonvml.SUCCESS
				}
			},
			wantIn: "GPU 3: get device handle", wantIs: gonvml.ERROR_GPU_IS_LOST, wantShutdowns: 1,
		},
		{
			name: "device count fails",
			mutate: func(lib *mock.Interface, _ []gonvml.Device) {
				lib.DeviceGetCountFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_UNKNOWN }
			},
			wantIn: "count GPUs", wantIs: gonvml.ERROR_UNKNOWN, wantShutdowns: 1,
		},
		{
			name: "init fails for another reason",
			mutate: func(lib *mock.Interface, _ []gonvml.Device) {
				lib.InitFunc = func() gonvml.Return { return gonvml.ERROR_NO_PERMISSION }
			},
			wantIn: "initialise NVML", wantIs: gonvml.ERROR_NO_PERMISSION, wantShutdowns: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devs := gb200Tray(1, 1, fourOf(completed(testCluster, 1)))
			lib := newLib(devs...)
			tc.mutate(lib, devs)
			_, err := New(Options{Library: lib}).Run(context.Background())
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tc.wantIs)
			}
			if n := len(lib.ShutdownCalls()); n != tc.wantShutdowns {
				t.Errorf("Shutdown called %d times, want %d", n, tc.wantShutdowns)
			}
		})
	}

	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		lib := newLib(gb200Tray(1, 1, fourOf(completed(testCluster, 1)))...)
		if _, err := New(Options{Library: lib}).Run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(lib.InitCalls()); n != 0 {
			t.Errorf("Init called %d times on a cancelled context, want 0", n)
		}
	})

	t.Run("shutdown failure is a warning", func(t *testing.T) {
		lib := newLib(gb200Tray(1, 1, fourOf(completed(testCluster, 1)))...)
		lib.ShutdownFunc = func() gonvml.Return { return gonvml.ERROR_UNKNOWN }
		res, err := New(Options{Library: lib}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"shut down NVML: ERROR_UNKNOWN"}, res.Warnings); diff != "" {
			t.Errorf("Warnings (-want +got):\n%s", diff)
		}
	})
}
