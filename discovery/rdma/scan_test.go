package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

func i32(v int32) *int32 { return &v }

const (
	compute = v1alpha1.PortClassCompute
	storage = v1alpha1.PortClassStorage
)

// ibRate is a port's rate as the kernel prints it and as the report gives it.
type ibRate struct {
	text  string
	gbps  int32
	width string
}

var (
	ndr4X = ibRate{"400 Gb/sec (4X NDR)", 400, "4X"}
	hdr4X = ibRate{"200 Gb/sec (4X HDR)", 200, "4X"}
	sdr4X = ibRate{"10 Gb/sec (4X SDR)", 10, "4X"}
)

// wantIB is the report object of one InfiniBand HCA with one port whose GUID is guid.
func wantIB(name, nodeGUID, portGUID, pci string, numa int32, gpu string, lid, smLID int32, state, phys string,
	rate ibRate, netdev string, class v1alpha1.PortClass) v1alpha1.RDMADevice {
	return v1alpha1.RDMADevice{
		Name: name, NodeGUID: nodeGUID, SystemImageGUID: nodeGUID, PCIAddress: pci, NUMANode: i32(numa),
		NearestGPU: gpu,
		Ports: []v1alpha1.RDMAPort{{
			Number: 1, GUID: portGUID, LinkLayer: "InfiniBand", State: state, PhysState: phys, Rate: rate.text,
			RateGbps: rate.gbps, Width: rate.width, LID: lid, SMLID: smLID, NetDev: netdev, Class: class,
			GIDs: []string{"fe80:0000:0000:0000:" + guidGroups(portGUID)},
		}},
	}
}

// guidGroups turns "0x946dae0300f81a20" into "946d:ae03:00f8:1a20".
func guidGroups(g string) string {
	h := strings.TrimPrefix(g, "0x")
	return h[0:4] + ":" + h[4:8] + ":" + h[8:12] + ":" + h[12:16]
}

func TestScanDGXH100(t *testing.T) {
	opts := Options{ClassRules: []ClassRule{{Class: storage, Device: "mlx5_8"}}}
	rep, err := Scan(context.Background(), fixtureRoot("dgx-h100-ib"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 || rep.NotApplicable != "" {
		t.Fatalf("warnings %q, not applicable %q", rep.Warnings, rep.NotApplicable)
	}
	const up, act = "LinkUp", "ACTIVE"
	ndr := ndr4X
	want := []v1alpha1.RDMADevice{
		wantIB("mlx5_0", "0x946dae0300f81a20", "0x946dae0300f81a20", "0000:18:00.0", 0, "0000:1b:00.0", 0x3e, 1, act, up, ndr, "ibp24s0", compute),
		wantIB("mlx5_1", "0x946dae0300f81b44", "0x946dae0300f81b44", "0000:40:00.0", 0, "0000:43:00.0", 0x51, 1, act, up, ndr, "ibp64s0", compute),
		wantIB("mlx5_2", "0x946dae0300f80c68", "0x946dae0300f80c68", "0000:4f:00.0", 0, "0000:52:00.0", 0x6a, 1, act, up, ndr, "ibp79s0", compute),
		wantIB("mlx5_3", "0x946dae0300f82d8c", "0x946dae0300f82d8c", "0000:5e:00.0", 0, "0000:61:00.0", 0x7c, 1, act, up, ndr, "ibp94s0", compute),
		wantIB("mlx5_4", "0x946dae0300f83eb0", "0x946dae0300f83eb0", "0000:9a:00.0", 1, "0000:9d:00.0", 0x92, 1, act, up, ndr, "ibp154s0", compute),
		wantIB("mlx5_5", "0x946dae0300f84fd4", "0x946dae0300f84fd4", "0000:c0:00.0", 1, "0000:c3:00.0", 0xffff, 0, "DOWN", "Polling", sdr4X, "ibp192s0", compute),
		wantIB("mlx5_6", "0x946dae0300f850f8", "0x946dae0300f850f8", "0000:ce:00.0", 1, "0000:d1:00.0", 0xb3, 1, act, up, ndr, "ibp206s0", compute),
		wantIB("mlx5_7", "0x946dae0300f8611c", "0x946dae0300f8611c", "0000:dc:00.0", 1, "0000:df:00.0", 0xc8, 1, act, up, ndr, "ibp220s0", compute),
		// The storage HCA: its port GUID (from gids/0) is not its node GUID, and no GPU shares its root complex.
		wantIB("mlx5_8", "0x0c42a10300778a3e", "0x0c42a10300778a3f", "0000:a8:00.0", 1, "", 0x7, 2, act, up, hdr4X, "ibp168s0", storage),
	}
	got, cut := ToAPI(rep.Devices, nil)
	if len(cut) != 0 {
		t.Errorf("truncated: %q", cut)
	}
	compareDevices(t, got, want)

	// Go-level detail: every compute HCA shares a PCIe switch with exactly one GPU (the NVSwitch and the BMC's
	// VGA behind the same or another bridge are not GPUs); the storage HCA has no GPU near it.
	for i, d := range rep.Devices[:8] {
		g := d.NearestGPU
		if g == nil || g.Level != AffinitySwitch || len(g.Candidates) != 1 || g.PCIAddress != want[i].NearestGPU {
			t.Errorf("%s: nearest GPU %+v, want %s behind one switch", d.Name, g, want[i].NearestGPU)
		}
		if len(d.PCIPath) != 5 || d.PCIPath[len(d.PCIPath)-1] != d.PCIAddress || g.Ancestor != d.PCIPath[2] {
			t.Errorf("%s: PCI path %q, ancestor %q", d.Name, d.PCIPath, g.Ancestor)
		}
	}
	if g := rep.Devices[8].NearestGPU; g != nil {
		t.Errorf("mlx5_8: nearest GPU %+v, want none", g)
	}
	p := rep.Devices[0].Ports[0]
	if p.StateID != 4 || p.PhysStateID != 5 || p.RateGbps != 400 || p.GIDs[0].Type != GIDTypeIBRoCEv1 || p.GIDs[0].Index != 0 {
		t.Errorf("mlx5_0 port 1: %+v", p)
	}
	if p := rep.Devices[5].Ports[0]; p.StateID != 1 || p.PhysStateID != 2 || p.RateGbps != 10 {
		t.Errorf("mlx5_5 port 1 (down): %+v", p)
	}
}

func TestScanRoCE(t *testing.T) {
	opts := Options{ClassRules: []ClassRule{{Class: storage, NetDev: "ens2*"}}}
	rep, err := Scan(context.Background(), fixtureRoot("roce"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Fatalf("warnings %q", rep.Warnings)
	}
	eth := func(rate ibRate, netdev string, class v1alpha1.PortClass, gids ...string) []v1alpha1.RDMAPort {
		return []v1alpha1.RDMAPort{{Number: 1, LinkLayer: "Ethernet", State: "ACTIVE", PhysState: "LinkUp",
			Rate: rate.text, RateGbps: rate.gbps, Width: rate.width, NetDev: netdev, Class: class, GIDs: gids}}
	}
	edr4X := ibRate{"100 Gb/sec (4X EDR)", 100, "4X"}
	want := []v1alpha1.RDMADevice{
		{Name: "mlx5_0", NodeGUID: "0xb83fd203004a1020", SystemImageGUID: "0xb83fd203004a1020",
			PCIAddress: "0000:3a:00.0", NUMANode: i32(0), NearestGPU: "0000:3b:00.0",
			Ports: eth(edr4X, "ens1f0np0", compute,
				"fe80:0000:0000:0000:ba3f:d2ff:fe4a:1020",
				"0000:0000:0000:0000:0000:ffff:0a0a:0115",
				"fd00:0010:0001:0000:0000:0000:0000:0021")},
		// The second function of the same adapter: own node GUID, the adapter's system image GUID.
		{Name: "mlx5_1", NodeGUID: "0xb83fd203004a1021", SystemImageGUID: "0xb83fd203004a1020",
			PCIAddress: "0000:3a:00.1", NUMANode: i32(0), NearestGPU: "0000:3b:00.0",
			Ports: eth(edr4X, "ens1f1np1", compute,
				"fe80:0000:0000:0000:ba3f:d2ff:fe4a:1021",
				"0000:0000:0000:0000:0000:ffff:0a0a:0215")},
		// Two GPUs share mlx5_2's switch: the rail is ambiguous, so the report names none.
		{Name: "mlx5_2", NodeGUID: "0xb83fd203004a3040", SystemImageGUID: "0xb83fd203004a3040",
			PCIAddress: "0000:89:00.0", NUMANode: i32(1),
			Ports: eth(hdr4X, "ens2f0np0", storage,
				"fe80:0000:0000:0000:ba3f:d2ff:fe4a:3040",
				"0000:0000:0000:0000:0000:ffff:ac10:0509")},
	}
	got, _ := ToAPI(rep.Devices, nil)
	compareDevices(t, got, want)

	g := rep.Devices[2].NearestGPU
	wantG := &GPUAffinity{PCIAddress: "0000:8a:00.0", Level: AffinitySwitch, Ancestor: "0000:87:00.0",
		Candidates: []string{"0000:8a:00.0", "0000:8b:00.0"}}
	if diff := cmp.Diff(wantG, g); diff != "" {
		t.Errorf("mlx5_2 nearest GPU (-want +got):\n%s", diff)
	}
	// The virtual function and the sub-function share mlx5_2's cable: scanned, left out of the report.
	type virt struct{ Name, PCI, Auxiliary, PhysFn, NetDev string }
	var gotVirt []virt
	for _, d := range rep.Devices[3:] {
		if d.NUMANode != 1 || !d.Virtual() {
			t.Errorf("%s: NUMA node %d, virtual %v", d.Name, d.NUMANode, d.Virtual())
		}
		gotVirt = append(gotVirt, virt{d.Name, d.PCIAddress, d.Auxiliary, d.PhysFn, d.Ports[0].NetDev})
	}
	wantVirt := []virt{
		{"mlx5_3", "0000:89:00.1", "", "0000:89:00.0", "ens2f0v0"},
		{"mlx5_4", "0000:89:00.0", "mlx5_core.sf.2", "", "enp137s0f0s88"},
	}
	if diff := cmp.Diff(wantVirt, gotVirt); diff != "" {
		t.Errorf("virtual devices (-want +got):\n%s", diff)
	}
	// The Go-level GID table keeps RoCE v1 entries, types and interfaces; the IPv4 GID unmaps to the address.
	gids := rep.Devices[0].Ports[0].GIDs
	if len(gids) != 6 {
		t.Fatalf("mlx5_0: %d GIDs, want 6", len(gids))
	}
	if g := gids[3]; g.Index != 3 || g.Type != GIDTypeRoCEv2 || g.NetDev != "ens1f0np0" ||
		g.Addr.Unmap() != netip.MustParseAddr("10.10.1.21") {
		t.Errorf("mlx5_0 GID 3: %+v", g)
	}
	if g := gids[2]; g.Index != 2 || g.Type != GIDTypeIBRoCEv1 {
		t.Errorf("mlx5_0 GID 2: %+v", g)
	}
}

func TestScanNoRDMA(t *testing.T) {
	rep, err := Scan(context.Background(), fixtureRoot("no-rdma"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "no RDMA devices under testdata/no-rdma/class/infiniband"
	if rep.NotApplicable != want || len(rep.Devices) != 0 || len(rep.Warnings) != 0 {
		t.Errorf("got %+v, want NotApplicable %q", rep, want)
	}
}

func TestToAPIMapsGPUUUIDs(t *testing.T) {
	rep, err := Scan(context.Background(), fixtureRoot("dgx-h100-ib"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// NVML spells PCI addresses with an 8-digit domain in upper case.
	got, _ := ToAPI(rep.Devices, map[string]string{"00000000:1B:00.0": "GPU-0f1e2d3c", "not-an-address": "GPU-x"})
	if got[0].NearestGPU != "GPU-0f1e2d3c" || got[1].NearestGPU != "0000:43:00.0" {
		t.Errorf("nearest GPUs %q, %q", got[0].NearestGPU, got[1].NearestGPU)
	}
	for _, d := range got {
		if d.Ports[0].Class != compute {
			t.Errorf("%s: class %q without rules, want compute", d.Name, d.Ports[0].Class)
		}
	}
}

func TestToAPITruncatesGIDs(t *testing.T) {
	p := Port{Number: 1, LinkLayer: LinkLayerInfiniBand}
	for i := range 70 {
		p.GIDs = append(p.GIDs, GID{Index: i, Addr: netip.AddrFrom16([16]byte{0xfe, 0x80, 15: byte(i + 1)})})
	}
	got, cut := ToAPI([]Device{{Name: "mlx5_0", NUMANode: -1, Ports: []Port{p}}}, nil)
	if n := len(got[0].Ports[0].GIDs); n != maxAPIGIDs || len(cut) != 1 || !strings.Contains(cut[0], "mlx5_0 port 1: 70 GIDs") {
		t.Errorf("%d GIDs kept, cut %q", n, cut)
	}
	if got[0].NUMANode != nil {
		t.Errorf("NUMA -1 reported as %v", *got[0].NUMANode)
	}
}

func compareDevices(t *testing.T, got, want []v1alpha1.RDMADevice) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d devices, want %d", len(got), len(want))
	}
	for i := range want {
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("device %d (-want +got):\n%s", i, diff)
		}
	}
}

func dump(d v1alpha1.RDMADevice) string {
	numa := "nil"
	if d.NUMANode != nil {
		numa = fmt.Sprint(*d.NUMANode)
	}
	ports := fmt.Sprintf("%+v", d.Ports)
	d.NUMANode, d.Ports = nil, nil
	return fmt.Sprintf("%+v numa=%s ports=%s", d, numa, ports)
}
