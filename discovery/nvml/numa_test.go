package nvml

import (
	"context"
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// TestNUMANode checks where the NUMA node comes from: NVML when it answers, sysfs otherwise, unknown (-1,
// nil in the report) when the kernel says -1, and a warning when neither source has it.
func TestNUMANode(t *testing.T) {
	const bus = "0000:3b:00.0"
	tests := []struct {
		name       string
		apiNode    int  // negative: NVML answers NOT_SUPPORTED
		noSymbol   bool // library lacks nvmlDeviceGetNumaNodeId
		sysfs      string
		wantNode   int
		wantAPI    int // calls of GetNumaNodeId
		wantWarnIn string
	}{
		{name: "NVML answers", apiNode: 2, sysfs: "0", wantNode: 2, wantAPI: 1},
		{name: "NVML not supported, sysfs answers", apiNode: -1, sysfs: "1", wantNode: 1, wantAPI: 1},
		{name: "library without the call, sysfs answers", apiNode: 5, noSymbol: true, sysfs: "1", wantNode: 1, wantAPI: 0},
		{name: "sysfs says no affinity", apiNode: -1, sysfs: "-1", wantNode: -1, wantAPI: 1},
		{name: "sysfs file missing", apiNode: -1, wantNode: -1, wantAPI: 1,
			wantWarnIn: "GPU 0 (GPU-a): read NUMA node: open "},
		{name: "sysfs file garbled", apiNode: -1, sysfs: "x", wantNode: -1, wantAPI: 1,
			wantWarnIn: `numa_node holds "x", not a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.sysfs != "" {
				writeNUMA(t, root, bus, tc.sysfs)
			}
			dev := fakeGPU{uuid: "GPU-a", name: "x", busID: "00000000:3B:00.0", numa: tc.apiNode,
				fabricRet: gonvml.ERROR_NOT_SUPPORTED}.newDevice()
			lib := newLib(dev)
			if tc.noSymbol {
				lib.ExtensionsFunc = func() gonvml.ExtendedInterface {
					return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
						if name == symNumaNodeID {
							return errors.New("undefined symbol")
						}
						return nil
					}}
				}
			}
			inv, err := New(Options{Library: lib, SysfsRoot: root}).Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := inv.GPUs[0].NUMANode; got != tc.wantNode {
				t.Errorf("NUMANode = %d, want %d", got, tc.wantNode)
			}
			if n := len(dev.GetNumaNodeIdCalls()); n != tc.wantAPI {
				t.Errorf("GetNumaNodeId called %d times, want %d", n, tc.wantAPI)
			}
			if api := inv.Result().GPUs[0].NUMANode; (api == nil) != (tc.wantNode < 0) || (api != nil && int(*api) != tc.wantNode) {
				t.Errorf("report NUMANode = %v, want %d (nil when negative)", api, tc.wantNode)
			}
			switch {
			case tc.wantWarnIn == "" && len(inv.Warnings) != 0:
				t.Errorf("Warnings = %q, want none", inv.Warnings)
			case tc.wantWarnIn != "" && (len(inv.Warnings) != 1 || !strings.Contains(inv.Warnings[0], tc.wantWarnIn)):
				t.Errorf("Warnings = %q, want one containing %q", inv.Warnings, tc.wantWarnIn)
			}
		})
	}
}
