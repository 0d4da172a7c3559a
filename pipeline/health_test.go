package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/ib"
)

// ibNeighbor is the neighbour the ibnetdiscover probe reports for a port cabled to the switch with this GUID.
func ibNeighbor(iface, guid, name string) v1alpha1.LinkNeighbor {
	return v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover, Interface: iface, ChassisID: guid, ChassisIDSubtype: "guid",
		PortID: "7", PortIDSubtype: "number", SystemName: name}
}

// TestHealthPorts: every RDMA port becomes a health port with its rail (the nearest GPU's index, matched by
// UUID or PCI address however spelt, or given as an index), the switch its neighbour names (by device/port,
// or by the RoCE port's network interface), its speed, class and the agent's condition.
func TestHealthPorts(t *testing.T) {
	gpus := []v1alpha1.GPU{
		{Index: 0, UUID: "GPU-0f1e2d3c-aaaa-bbbb-cccc-000000000000", PCIBusID: "00000000:1B:00.0"},
		{Index: 3, UUID: "GPU-0f1e2d3c-aaaa-bbbb-cccc-000000000003", PCIBusID: "00000000:9A:00.0"},
	}
	rep := v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: "dgx-01"}, Spec: v1alpha1.NodeFabricReportSpec{
		GPUs: gpus,
		RDMADevices: []v1alpha1.RDMADevice{
			{Name: "mlx5_0", NearestGPU: gpus[0].UUID, Ports: []v1alpha1.RDMAPort{{Number: 1, RateGbps: 400, Width: "4X", Class: v1alpha1.PortClassCompute,
				Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}}}},
			{Name: "mlx5_3", NearestGPU: "0000:9a:00.0", Ports: []v1alpha1.RDMAPort{{Number: 1, RateGbps: 200, Width: "4X",
				Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDegraded, Reason: "SlowerThanCapable", Message: "200 Gb/s of 400"}}}},
			{Name: "mlx5_4", NearestGPU: "GPU-5", Ports: []v1alpha1.RDMAPort{{Number: 1, NetDev: "eth4"}}},
			{Name: "mlx5_5", NearestGPU: "6", Ports: []v1alpha1.RDMAPort{{Number: 1}, {Number: 2}}},
			{Name: "mlx5_8", NearestGPU: "0000:c1:00.0", Ports: []v1alpha1.RDMAPort{{Number: 1, Class: v1alpha1.PortClassStorage,
				Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkDown, Reason: "PortDown"}}}},
			{Name: "mlx5_9", Ports: []v1alpha1.RDMAPort{{Number: 1}}},
		},
		Neighbors: []v1alpha1.LinkNeighbor{
			ibNeighbor("mlx5_0/1", "0xB83FD20300A10002", "leaf-r0"),
			ibNeighbor("mlx5_0/1", "0xb83fd20300a10099", "seen twice: the first is kept"),
			ibNeighbor("mlx5_3/1", "0xb83fd20300a10003", "leaf-r3"),
			{Source: v1alpha1.SourceLLDP, Interface: "eth4", ChassisID: "02:00:00:00:00:0a", ChassisIDSubtype: "mac", SystemName: "roce-leaf"},
			ibNeighbor("mlx5_5/2", "b83fd20300a10006", "leaf-r6"),
			func() v1alpha1.LinkNeighbor {
				n := ibNeighbor("mlx5_9/1", "b83fd20300a10009", "storage")
				n.Class = v1alpha1.PortClassStorage
				return n
			}(),
		},
	}}
	want := []health.NodePorts{{Node: "dgx-01", Ports: []health.Port{
		{Device: "mlx5_0", Number: 1, Rail: 0, Switch: "guid:b83fd20300a10002", RateGbps: 400, Width: "4X", Condition: "Healthy"},
		{Device: "mlx5_3", Number: 1, Rail: 3, Switch: "guid:b83fd20300a10003", RateGbps: 200, Width: "4X",
			Condition: "Degraded", Reason: "SlowerThanCapable", Message: "200 Gb/s of 400"},
		{Device: "mlx5_4", Number: 1, Rail: 5, Switch: "mac:02:00:00:00:00:0a"},
		{Device: "mlx5_5", Number: 1, Rail: 6},
		{Device: "mlx5_5", Number: 2, Rail: 6, Switch: "guid:b83fd20300a10006"},
		{Device: "mlx5_8", Number: 1, Rail: -1, Storage: true, Condition: "Down", Reason: "PortDown"},
		{Device: "mlx5_9", Number: 1, Rail: -1, Switch: "guid:b83fd20300a10009", Storage: true},
	}}}
	if diff := cmp.Diff(want, HealthPorts([]*v1alpha1.NodeFabricReport{&rep})); diff != "" {
		t.Errorf("HealthPorts (-want +got):\n%s", diff)
	}
	// The switch identifier is the one the tree's evidence uses.
	if ev := EvidenceFromReport(&rep); ev.Links[0].SwitchID != want[0].Ports[0].Switch {
		t.Errorf("evidence names the switch %q, health %q", ev.Links[0].SwitchID, want[0].Ports[0].Switch)
	}
}

func TestRailOf(t *testing.T) {
	gpus := []v1alpha1.GPU{{Index: 2, UUID: "GPU-abc", PCIBusID: "00000000:1B:00.0"}, {Index: 7, UUID: "GPU-def"}}
	for _, tc := range []struct {
		nearest string
		want    int
	}{
		{"GPU-abc", 2},
		{"GPU-def", 7},
		{"0000:1b:00.0", 2},     // the PCI address, spelt as the RDMA probe does
		{"1b:00.0", 2},          // without a domain
		{"0000:2b:00.0", -1},    // a GPU the report does not list: its index is not known
		{"GPU-4", 4},            // a fixture's name
		{"3", 3},                // a bare index
		{"GPU-0f1e2d3c-aa", -1}, // a UUID of no listed GPU
		{"", -1},
		{"-2", -1},
	} {
		if got := railOf(tc.nearest, gpus); got != tc.want {
			t.Errorf("railOf(%q) = %d, want %d", tc.nearest, got, tc.want)
		}
	}
}

// TestSwitchLinksFromFabric: the capture's switch-to-switch cables, with the width and rate as the reports
// give them; host cables are not switch links.
func TestSwitchLinksFromFabric(t *testing.T) {
	const capture = `
switchguid=0xb83fd20300a10001(b83fd20300a10001)
Switch	65 "S-b83fd20300a10001"		# "MF0;ib-spine-01:MQM9700/U1" enhanced port 0 lid 1 lmc 0
[1]	"S-b83fd20300a10002"[33]		# "MF0;ib-leaf-01:MQM9700/U1" lid 2 4xNDR
[2]	"S-b83fd20300a10002"[34]		# "MF0;ib-leaf-01:MQM9700/U1" lid 2 2xNDR
[3]	"S-b83fd20300a10003"[33]		# "MF0;ib-leaf-02:MQM9700/U1" lid 3 4xHDR

switchguid=0xb83fd20300a10002(b83fd20300a10002)
Switch	65 "S-b83fd20300a10002"		# "MF0;ib-leaf-01:MQM9700/U1" enhanced port 0 lid 2 lmc 0
[1]	"H-946dae0300c20001"[1](946dae0300c20001) 		# "dgx-a01 mlx5_0" lid 11 4xNDR
[33]	"S-b83fd20300a10001"[1]		# "MF0;ib-spine-01:MQM9700/U1" lid 1 4xNDR
[34]	"S-b83fd20300a10001"[2]		# "MF0;ib-spine-01:MQM9700/U1" lid 1 2xNDR

switchguid=0xb83fd20300a10003(b83fd20300a10003)
Switch	65 "S-b83fd20300a10003"		# "MF0;ib-leaf-02:MQM9700/U1" enhanced port 0 lid 3 lmc 0
[33]	"S-b83fd20300a10001"[3]		# "MF0;ib-spine-01:MQM9700/U1" lid 1 4xHDR
`
	f, _, err := ib.Parse(strings.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	spine, leaf1, leaf2 := "guid:b83fd20300a10001", "guid:b83fd20300a10002", "guid:b83fd20300a10003"
	want := []health.Link{
		{From: spine, To: leaf1, RateGbps: 400, Width: "4X", Source: "ibnetdiscover"},
		{From: spine, To: leaf1, RateGbps: 200, Width: "2X", Source: "ibnetdiscover"},
		{From: spine, To: leaf2, RateGbps: 200, Width: "4X", Source: "ibnetdiscover"},
	}
	if diff := cmp.Diff(want, SwitchLinksFromFabric(f)); diff != "" {
		t.Errorf("switch links (-want +got):\n%s", diff)
	}
	if got := SwitchLinksFromFabric(nil); got != nil {
		t.Errorf("no fabric gave %v", got)
	}
}

func TestIBLinkRate(t *testing.T) {
	for _, tc := range []struct {
		width, speed string
		wantWidth    string
		wantRate     int32
	}{
		{"4x", "NDR", "4X", 400},
		{"4x", "HDR", "4X", 200},
		{"1x", "NDR", "1X", 100},
		{"12x", "QDR", "12X", 120},
		{"4x", "FDR", "4X", 56},
		{"4x", "FDR10", "4X", 40},
		{"1x", "SDR", "1X", 3}, // 2.5 Gb/s, rounded
		{"4x", "???", "4X", 0},
		{"??", "???", "", 0},
		{"", "", "", 0},
	} {
		w, r := ibLinkRate(tc.width, tc.speed)
		if w != tc.wantWidth || r != tc.wantRate {
			t.Errorf("ibLinkRate(%q, %q) = %q, %d; want %q, %d", tc.width, tc.speed, w, r, tc.wantWidth, tc.wantRate)
		}
	}
}

func TestEventReason(t *testing.T) {
	want := map[health.Kind]string{
		health.KindMiscabledRail: "MiscabledRail", health.KindDegradedLink: "DegradedLink", health.KindErroringLink: "ErroringLink",
		health.KindFlappingLink: "FlappingLink", health.KindLinkDown: "LinkDown", health.KindUplinkLost: ReasonUplinkLost,
		health.KindSwitchLost: ReasonSwitchLost, health.KindDrift: "Drift",
	}
	got := map[health.Kind]string{}
	for _, k := range health.Kinds {
		got[k] = EventReason(k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Event reasons by kind (-want +got):\n%s", diff)
	}
}
