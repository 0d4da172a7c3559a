package rdma

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNearestGPU(t *testing.T) {
	p := func(s string) []string { return strings.Split(s, "/") }
	hca := p("pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0")
	for _, tc := range []struct {
		name string
		gpus []gpu
		want *GPUAffinity
	}{{
		name: "no GPU",
	}, {
		name: "same switch beats same root port beats same host bridge",
		gpus: []gpu{
			{"0000:15:02.0", p("pci0000:15/0000:15:02.0")},
			{"0000:1b:00.0", p("pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:03.0/0000:1b:00.0")},
			{"0000:19:00.0", p("pci0000:15/0000:15:01.0/0000:19:00.0")},
		},
		want: &GPUAffinity{PCIAddress: "0000:1b:00.0", Level: AffinitySwitch, Ancestor: "0000:16:00.0",
			Candidates: []string{"0000:1b:00.0"}},
	}, {
		name: "root port",
		gpus: []gpu{
			{"0000:15:02.0", p("pci0000:15/0000:15:02.0")},
			{"0000:19:00.0", p("pci0000:15/0000:15:01.0/0000:19:00.0")},
		},
		want: &GPUAffinity{PCIAddress: "0000:19:00.0", Level: AffinityRootPort, Ancestor: "0000:15:01.0",
			Candidates: []string{"0000:19:00.0"}},
	}, {
		name: "host bridge, tied",
		gpus: []gpu{
			{"0000:15:02.0", p("pci0000:15/0000:15:02.0")},
			{"0000:15:03.0", p("pci0000:15/0000:15:03.0")},
		},
		want: &GPUAffinity{PCIAddress: "0000:15:02.0", Level: AffinityHostBridge, Ancestor: "pci0000:15",
			Candidates: []string{"0000:15:02.0", "0000:15:03.0"}},
	}, {
		name: "other root complex only",
		gpus: []gpu{{"0000:1b:00.0", p("pci0000:1a/0000:1a:01.0/0000:1b:00.0")}},
	}, {
		name: "GPU behind a VMD controller of the same host bridge",
		gpus: []gpu{{"10000:e1:00.0", p("pci0000:15/0000:15:05.5/pci10000:e0/10000:e0:1d.0/10000:e1:00.0")}},
		want: &GPUAffinity{PCIAddress: "10000:e1:00.0", Level: AffinityHostBridge, Ancestor: "pci0000:15",
			Candidates: []string{"10000:e1:00.0"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nearestGPU(hca, tc.gpus)); diff != "" {
				t.Errorf("nearestGPU (-want +got):\n%s", diff)
			}
		})
	}

	// Behind a VMD controller the VMD domain is the host bridge.
	vmdHCA := p("pci0000:15/0000:15:05.5/pci10000:e0/10000:e0:1c.0/10000:e2:00.0")
	vmdGPU := []gpu{{"10000:e1:00.0", p("pci0000:15/0000:15:05.5/pci10000:e0/10000:e0:1d.0/10000:e1:00.0")}}
	if got := nearestGPU(vmdHCA, vmdGPU); got == nil || got.Level != AffinityHostBridge || got.Ancestor != "pci10000:e0" {
		t.Errorf("VMD: %+v", got)
	}
}
