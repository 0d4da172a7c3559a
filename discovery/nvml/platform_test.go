package nvml

import (
	"context"
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"
)

// chassisTray is a GB200 compute tray of one NVLink domain (clique 1) whose GPUs' platform info names the
// given chassis, one per GPU.
func chassisTray(chassis [4]string) []gonvml.Device {
	devs := make([]gonvml.Device, 0, 4)
	for i := 0; i < 4; i++ {
		devs = append(devs, fakeGPU{uuid: trayGPUUUID(1, 1, i), name: "NVIDIA GB200", busID: gb200TrayBusIDs[i],
			numa: i / 2, fabric: completed(testCluster, 1), links: 18, chassis: chassis[i]}.newDevice())
	}
	return devs
}

// TestNVLinkSubDomain: the sub-domain is the chassis every GPU of the node reports, withheld with a warning
// when they disagree, and absent (no call made) without the platform-info call.
func TestNVLinkSubDomain(t *testing.T) {
	const serial = "1821724000123"
	tests := []struct {
		name       string
		chassis    [4]string
		missing    bool // the library lacks nvmlDeviceGetPlatformInfo
		want       string
		wantWarned string
	}{
		{name: "every GPU in one chassis", chassis: [4]string{serial, serial, serial, serial}, want: serial},
		{name: "no chassis reported", chassis: [4]string{}},
		{name: "a driver without the call", chassis: [4]string{serial, serial, serial, serial}, missing: true},
		{name: "GPUs in two chassis", chassis: [4]string{serial, serial, serial, "1821724000456"},
			wantWarned: "GPUs of one node report different chassis: " + serial + " on GPU 0 (" + trayGPUUUID(1, 1, 0) + ")"},
		{name: "one GPU without a chassis", chassis: [4]string{serial, serial, serial, ""},
			wantWarned: "none on GPU 3 (" + trayGPUUUID(1, 1, 3) + "); NVLink sub-domain withheld"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := newLib(chassisTray(tc.chassis)...)
			if tc.missing {
				lib.ExtensionsFunc = func() gonvml.ExtendedInterface {
					return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
						if name == symPlatformInfo {
							return errors.New("undefined symbol")
						}
						return nil
					}}
				}
			}
			inv, err := New(Options{Library: lib, SysfsRoot: t.TempDir()}).Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if inv.NVLinkDomain != testClusterUUID+".1" || inv.NVLinkSubDomain != tc.want {
				t.Errorf("domain %q, sub-domain %q; want sub-domain %q", inv.NVLinkDomain, inv.NVLinkSubDomain, tc.want)
			}
			if got := inv.Result().NVLinkSubDomain; got != tc.want {
				t.Errorf("Result().NVLinkSubDomain = %q, want %q", got, tc.want)
			}
			warned := strings.Join(inv.Warnings, "\n")
			if (tc.wantWarned == "") != (warned == "") || !strings.Contains(warned, tc.wantWarned) {
				t.Errorf("warnings %q, want one containing %q", inv.Warnings, tc.wantWarned)
			}
		})
	}
}

func TestChassisID(t *testing.T) {
	guid := [16]uint8{0x7c, 0x3f, 0x0e, 0x2a, 0x9b, 0x1d, 0x4e, 0x6f, 0x8a, 0x2c, 0x3b, 0x4d, 0x5e, 0x6f, 0x70, 0x81}
	var serial [16]uint8
	copy(serial[:], "1821724000123")
	got := []string{chassisID([16]uint8{}), chassisID(serial), chassisID(guid)}
	want := []string{"", "1821724000123", "7c3f0e2a9b1d4e6f8a2c3b4d5e6f7081"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chassisID (-want +got):\n%s", diff)
	}
}
