package nvml

import (
	"context"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// TestFormatUUID checks the cluster UUID text: canonical 8-4-4-4-12, lower case, as GFD's clique label has it.
func TestFormatUUID(t *testing.T) {
	tests := []struct {
		in   [16]byte
		want string
	}{
		{testCluster, testClusterUUID},
		{[16]byte{0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89},
			"abcdef01-2345-6789-abcd-ef0123456789"},
		{[16]byte{15: 1}, "00000000-0000-0000-0000-000000000001"},
	}
	for _, tc := range tests {
		if got := formatUUID(tc.in); got != tc.want {
			t.Errorf("formatUUID(%x) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestVersionedFabricInfo checks which fabric call the probe makes: the versioned one when the library has
// it and the device can answer, the original one otherwise, NotSupported when the driver has neither.
func TestVersionedFabricInfo(t *testing.T) {
	v2 := gonvml.GpuFabricInfo_v2{ClusterUuid: testCluster, CliqueId: 3, State: gonvml.GPU_FABRIC_STATE_COMPLETED}
	tests := []struct {
		name      string
		missing   []string // symbols the library lacks
		vRet      gonvml.Return
		vOK       bool
		wantV     int // calls of the versioned reader
		wantV1    int // calls of GetGpuFabricInfo per GPU
		wantState FabricState
		wantDom   string
		wantWarn  string
	}{
		{name: "versioned call answers", vRet: gonvml.SUCCESS, vOK: true, wantV: 4, wantV1: 0,
			wantState: FabricCompleted, wantDom: testClusterUUID + ".3"},
		{name: "versioned struct too new for the driver", vRet: gonvml.ERROR_ARGUMENT_VERSION_MISMATCH, vOK: true,
			wantV: 4, wantV1: 1, wantState: FabricCompleted, wantDom: testClusterUUID + ".9"},
		{name: "versioned call not supported", vRet: gonvml.ERROR_NOT_SUPPORTED, vOK: true,
			wantV: 4, wantV1: 1, wantState: FabricCompleted, wantDom: testClusterUUID + ".9"},
		{name: "device cannot answer the versioned call", vOK: false,
			wantV: 4, wantV1: 1, wantState: FabricCompleted, wantDom: testClusterUUID + ".9"},
		{name: "versioned call fails", vRet: gonvml.ERROR_UNKNOWN, vOK: true, wantV: 4, wantV1: 0,
			wantState: FabricUnknown, wantWarn: "read NVLink fabric info (versioned): ERROR_UNKNOWN"},
		{name: "library without the versioned symbol", missing: []string{symGpuFabricInfoV},
			wantV: 0, wantV1: 1, wantState: FabricCompleted, wantDom: testClusterUUID + ".9"},
		{name: "driver older than the fabric API", missing: []string{symGpuFabricInfoV, symGpuFabricInfo},
			wantV: 0, wantV1: 0, wantState: FabricNotSupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devs := gb200Tray(1, 1, fourOf(completed(testCluster, 9)))
			lib := newLib(devs...)
			lib.ExtensionsFunc = func() gonvml.ExtendedInterface {
				return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
					for _, m := range tc.missing {
						if m == name {
							return gonvml.ERROR_FUNCTION_NOT_FOUND
						}
					}
					return nil
				}}
			}
			p := New(Options{Library: lib})
			vCalls := 0
			p.fabricV = func(gonvml.Device) (gonvml.GpuFabricInfo_v2, gonvml.Return, bool) {
				vCalls++
				return v2, tc.vRet, tc.vOK
			}
			inv, err := p.Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if vCalls != tc.wantV {
				t.Errorf("versioned reader called %d times, want %d", vCalls, tc.wantV)
			}
			for i, d := range devs {
				if n := len(d.(*mock.Device).GetGpuFabricInfoCalls()); n != tc.wantV1 {
					t.Errorf("GPU %d: GetGpuFabricInfo called %d times, want %d", i, n, tc.wantV1)
				}
				if got := inv.GPUs[i].Fabric.State; got != tc.wantState {
					t.Errorf("GPU %d: state %q, want %q", i, got, tc.wantState)
				}
			}
			if inv.NVLinkDomain != tc.wantDom {
				t.Errorf("NVLinkDomain = %q, want %q", inv.NVLinkDomain, tc.wantDom)
			}
			if tc.wantWarn != "" && (len(inv.Warnings) == 0 || !strings.HasSuffix(inv.Warnings[0], tc.wantWarn)) {
				t.Errorf("Warnings = %q, want the first to end in %q", inv.Warnings, tc.wantWarn)
			}
			if tc.wantWarn == "" && len(inv.Warnings) != 0 {
				t.Errorf("Warnings = %q, want none", inv.Warnings)
			}
		})
	}
}

// TestVersionedFabricInfoOnMock checks that the default versioned reader recognises a device that can only
// hand out the zero handler, instead of calling into C with it.
func TestVersionedFabricInfoOnMock(t *testing.T) {
	dev := &mock.Device{GetGpuFabricInfoVFunc: func() gonvml.GpuFabricInfoHandler { return gonvml.GpuFabricInfoHandler{} }}
	if _, _, ok := versionedFabricInfo(dev); ok {
		t.Error("versionedFabricInfo on a mock device reported ok, want false")
	}
}
