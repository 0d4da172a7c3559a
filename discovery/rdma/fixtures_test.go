package rdma

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
)

// The fixture trees under testdata/ are written by the builders below. Regenerate them with
//
//	go test ./discovery/rdma/ -run TestFixturesMatchBuilders -update
//
// They copy real sysfs: devices live under devices/pci<host bridge>/<root port>/.../<function>/, and
// class/infiniband/<dev>, class/net/<if> and bus/pci/devices/<addr> are relative symlinks into that tree, as
// are the device links inside infiniband/<dev>/ and net/<if>/; so are class/infiniband_mad/<umad|issm>,
// class/infiniband_verbs/<uverbs> and bus/auxiliary/devices/<mlx5_core.*>, which rdmamap reads. Values are
// written as the kernel prints them. Directories are never left empty, so that git keeps every one of them.
// Only the attributes the probe and rdmamap read (counters/ and hw_counters/ whole), plus a few every RDMA
// device has (node_type, fw_ver, hca_type, board_id, node_desc, lid_mask_count), are written: real sysfs has
// many more files, which the probe ignores.
var update = flag.Bool("update", false, "rewrite the fixture trees under testdata/")

// fixtures names every fixture tree and its builder.
var fixtures = map[string]func(*tree){
	"dgx-h100-ib": buildDGXH100,
	"roce":        buildRoCE,
	"no-rdma":     buildNoRDMA,
}

// tree writes one fixture tree.
type tree struct {
	t    testing.TB
	root string
}

func (tr *tree) file(rel, content string) {
	tr.t.Helper()
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// link makes rel a symlink to target, which must be relative (git keeps it, and it works in any checkout).
func (tr *tree) link(rel, target string) {
	tr.t.Helper()
	if filepath.IsAbs(target) {
		tr.t.Fatalf("fixture link %s -> %s is absolute", rel, target)
	}
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		tr.t.Fatal(err)
	}
}

// pciFunc is one PCI function: its place under devices/ and the attributes sysfs gives every function.
type pciFunc struct {
	path                  string // "pci0000:15/0000:15:01.0/0000:16:00.0"
	vendor, device, class string
	numa                  string
}

func (f pciFunc) addr() string { return filepath.Base(f.path) }

// pci writes a PCI function's attributes and its bus/pci/devices link.
func (tr *tree) pci(f pciFunc) {
	tr.t.Helper()
	d := filepath.Join("devices", f.path)
	tr.file(filepath.Join(d, "vendor"), f.vendor)
	tr.file(filepath.Join(d, "device"), f.device)
	tr.file(filepath.Join(d, "class"), f.class)
	tr.file(filepath.Join(d, "numa_node"), f.numa)
	tr.link(filepath.Join("bus", "pci", "devices", f.addr()), "../../../devices/"+f.path)
}

// bridge writes a PCIe bridge function (root port or switch port).
func (tr *tree) bridge(path, vendor, numa string) {
	tr.pci(pciFunc{path: path, vendor: vendor, device: "0x0000", class: "0x060400", numa: numa})
}

// ibPort is one port of an RDMA device.
type ibPort struct {
	linkLayer, state, physState, rate, lid, smLID string
	gids                                          []gidEntry // gids/0..N-1; a zero GID has no attrs
	// counters and hwCounters are the files of counters/ and hw_counters/; none when nil.
	counters, hwCounters map[string]string
}

// ibCounters are an mlx5 InfiniBand port's counters/ (the PMA PortCounters the kernel shows), on a link that
// came up once since boot and carried traffic without an error.
func ibCounters() map[string]string {
	return map[string]string{
		"VL15_dropped": "0", "excessive_buffer_overrun_errors": "0", "link_downed": "1", "link_error_recovery": "0",
		"local_link_integrity_errors": "0", "multicast_rcv_packets": "1802", "multicast_xmit_packets": "77",
		"port_rcv_constraint_errors": "0", "port_rcv_data": "81730482977", "port_rcv_errors": "0",
		"port_rcv_packets": "190371218", "port_rcv_remote_physical_errors": "0", "port_rcv_switch_relay_errors": "0",
		"port_xmit_constraint_errors": "0", "port_xmit_data": "80112755023", "port_xmit_discards": "0",
		"port_xmit_packets": "188839017", "port_xmit_wait": "41234", "symbol_error": "0",
		"unicast_rcv_packets": "190369416", "unicast_xmit_packets": "188838940",
	}
}

// mlx5HwCounters are an mlx5 port's hw_counters/ (its queue counters); RoCE ports have congestion control's
// and adaptive retransmission's too. lifespan is a setting (ms), not a counter.
func mlx5HwCounters(roce bool) map[string]string {
	m := map[string]string{
		"duplicate_request": "0", "implied_nak_seq_err": "0", "lifespan": "10", "local_ack_timeout_err": "0",
		"out_of_buffer": "0", "out_of_sequence": "0", "packet_seq_err": "0", "req_cqe_error": "0",
		"req_cqe_flush_error": "0", "req_remote_access_errors": "0", "req_remote_invalid_request": "0",
		"resp_cqe_error": "0", "resp_cqe_flush_error": "0", "resp_local_length_error": "0",
		"resp_remote_access_errors": "0", "rnr_nak_retry_err": "0", "rx_atomic_requests": "0",
		"rx_dct_connect": "0", "rx_icrc_encapsulated": "0", "rx_read_requests": "1024", "rx_write_requests": "88812",
	}
	if roce {
		for _, n := range []string{"np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
			"roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
			"roce_slow_restart_trans"} {
			m[n] = "0"
		}
	}
	return m
}

type gidEntry struct{ gid, typ, ndev string }

const zeroGID = "0000:0000:0000:0000:0000:0000:0000:0000"

// rdmaDev writes infiniband/<name>/ under a PCI function (or, for a sub-function, under its auxiliary device:
// fn.path then ends with it), with its class/infiniband link.
func (tr *tree) rdmaDev(fn pciFunc, name, nodeGUID, sysGUID, hcaType, fw string, ports ...ibPort) {
	tr.t.Helper()
	d := filepath.Join("devices", fn.path, "infiniband", name)
	tr.file(filepath.Join(d, "node_guid"), nodeGUID)
	tr.file(filepath.Join(d, "sys_image_guid"), sysGUID)
	tr.file(filepath.Join(d, "node_type"), "1: CA")
	tr.file(filepath.Join(d, "node_desc"), "fixture-node "+name)
	tr.file(filepath.Join(d, "hca_type"), hcaType)
	tr.file(filepath.Join(d, "fw_ver"), fw)
	tr.file(filepath.Join(d, "board_id"), "MT_0000000838")
	tr.link(filepath.Join(d, "device"), "../../../"+fn.addr())
	for i, p := range ports {
		pd := filepath.Join(d, "ports", fmt.Sprint(i+1))
		tr.file(filepath.Join(pd, "link_layer"), p.linkLayer)
		tr.file(filepath.Join(pd, "state"), p.state)
		tr.file(filepath.Join(pd, "phys_state"), p.physState)
		tr.file(filepath.Join(pd, "rate"), p.rate)
		tr.file(filepath.Join(pd, "lid"), p.lid)
		tr.file(filepath.Join(pd, "sm_lid"), p.smLID)
		tr.file(filepath.Join(pd, "lid_mask_count"), "0")
		for j, g := range p.gids {
			tr.file(filepath.Join(pd, "gids", fmt.Sprint(j)), g.gid)
			if g.typ != "" {
				tr.file(filepath.Join(pd, "gid_attrs", "types", fmt.Sprint(j)), g.typ)
			}
			if g.ndev != "" {
				tr.file(filepath.Join(pd, "gid_attrs", "ndevs", fmt.Sprint(j)), g.ndev)
			}
		}
		for dir, files := range map[string]map[string]string{"counters": p.counters, "hw_counters": p.hwCounters} {
			for f, v := range files {
				tr.file(filepath.Join(pd, dir, f), v)
			}
		}
	}
	tr.link(filepath.Join("class", "infiniband", name), "../../devices/"+fn.path+"/infiniband/"+name)
}

// charDevs writes the character devices ib_umad and ib_uverbs give port 1 of RDMA device dev (umad<i>,
// issm<i>, uverbs<i>, each with the ibdev it belongs to and its major:minor) under its PCI function (or
// auxiliary device), with their class links and the classes' abi_version.
func (tr *tree) charDevs(fn pciFunc, dev string, i int) {
	tr.t.Helper()
	tr.file("class/infiniband_mad/abi_version", "5")
	tr.file("class/infiniband_verbs/abi_version", "6")
	for _, c := range []struct{ class, name, minor string }{
		{"infiniband_mad", fmt.Sprintf("umad%d", i), fmt.Sprint(i)},
		{"infiniband_mad", fmt.Sprintf("issm%d", i), fmt.Sprint(64 + i)},
		{"infiniband_verbs", fmt.Sprintf("uverbs%d", i), fmt.Sprint(192 + i)},
	} {
		d := filepath.Join("devices", fn.path, c.class, c.name)
		tr.file(filepath.Join(d, "ibdev"), dev)
		tr.file(filepath.Join(d, "dev"), "231:"+c.minor)
		if c.class == "infiniband_mad" {
			tr.file(filepath.Join(d, "port"), "1")
		} else {
			tr.file(filepath.Join(d, "abi_version"), "1")
		}
		tr.link(filepath.Join("class", c.class, c.name), "../../devices/"+fn.path+"/"+c.class+"/"+c.name)
	}
}

// auxDev writes the auxiliary device mlx5_core.<kind>.<n> (kind: eth, rdma, sf) below a PCI function, with its
// bus/auxiliary/devices link, and returns it as the parent of what sits on it (a sub-function's RDMA device
// and network interface).
func (tr *tree) auxDev(fn pciFunc, kind string, n int) pciFunc {
	tr.t.Helper()
	name := fmt.Sprintf("mlx5_core.%s.%d", kind, n)
	d := filepath.Join("devices", fn.path, name)
	driver := map[string]string{"eth": "mlx5_core.eth", "rdma": "mlx5_ib.rdma", "sf": "mlx5_core.sf"}[kind]
	tr.file(filepath.Join(d, "uevent"), "DRIVER="+driver+"\nMODALIAS=auxiliary:mlx5_core."+kind)
	tr.link(filepath.Join("bus", "auxiliary", "devices", name), "../../../devices/"+fn.path+"/"+name)
	return pciFunc{path: fn.path + "/" + name, numa: fn.numa}
}

// netDev writes net/<name>/ under a PCI function (or auxiliary device), with its class/net link. typ is the
// ARPHRD type (1 Ethernet, 32 InfiniBand).
func (tr *tree) netDev(fn pciFunc, name, mac, devPort, typ string) {
	tr.t.Helper()
	d := filepath.Join("devices", fn.path, "net", name)
	tr.file(filepath.Join(d, "address"), mac)
	tr.file(filepath.Join(d, "dev_port"), devPort)
	tr.file(filepath.Join(d, "type"), typ)
	tr.link(filepath.Join(d, "device"), "../../../"+fn.addr())
	tr.link(filepath.Join("class", "net", name), "../../devices/"+fn.path+"/net/"+name)
}

// ibGIDs is an InfiniBand GID table: GID 0 is the subnet prefix and the port GUID, the rest unused.
func ibGIDs(prefix, portGUID string) []gidEntry {
	return []gidEntry{{gid: prefix + ":" + portGUID, typ: "IB/RoCE v1"}, {gid: zeroGID}, {gid: zeroGID}, {gid: zeroGID}}
}

// ipoibAddr is the 20-byte hardware address of an IPoIB interface: flags and QPN, then the port GID.
func ipoibAddr(portGUID string) string {
	h := "00001029" + "fe80000000000000" + strings.ReplaceAll(portGUID, ":", "")
	var b []string
	for i := 0; i < len(h); i += 2 {
		b = append(b, h[i:i+2])
	}
	return strings.Join(b, ":")
}

// dgxRail is one GPU and its HCA behind one PCIe switch on a DGX H100-like node.
type dgxRail struct {
	hb          int // host bridge bus; root port hb:01.0, switch up port hb+1, down ports on hb+2
	hca, netdev string
	guid, lid   string
	down        bool
	numa        string
}

// buildDGXH100 writes an 8-GPU, 8-HCA NDR InfiniBand node shaped like a DGX H100: each ConnectX-7 shares a
// PCIe switch with one H100 (NIC on bus hb+3, GPU on bus hb+6); mlx5_5's cable is out (DOWN/Polling); one
// NVSwitch sits behind the first switch and a BMC VGA on the platform root complex (neither is a GPU); a
// ConnectX-6 storage HCA (mlx5_8) has a root complex of its own.
func buildDGXH100(tr *tree) {
	rails := []dgxRail{
		{hb: 0x15, hca: "mlx5_0", netdev: "ibp24s0", guid: "946d:ae03:00f8:1a20", lid: "0x3e", numa: "0"},
		{hb: 0x3d, hca: "mlx5_1", netdev: "ibp64s0", guid: "946d:ae03:00f8:1b44", lid: "0x51", numa: "0"},
		{hb: 0x4c, hca: "mlx5_2", netdev: "ibp79s0", guid: "946d:ae03:00f8:0c68", lid: "0x6a", numa: "0"},
		{hb: 0x5b, hca: "mlx5_3", netdev: "ibp94s0", guid: "946d:ae03:00f8:2d8c", lid: "0x7c", numa: "0"},
		{hb: 0x97, hca: "mlx5_4", netdev: "ibp154s0", guid: "946d:ae03:00f8:3eb0", lid: "0x92", numa: "1"},
		{hb: 0xbd, hca: "mlx5_5", netdev: "ibp192s0", guid: "946d:ae03:00f8:4fd4", lid: "0xffff", numa: "1", down: true},
		{hb: 0xcb, hca: "mlx5_6", netdev: "ibp206s0", guid: "946d:ae03:00f8:50f8", lid: "0xb3", numa: "1"},
		{hb: 0xd9, hca: "mlx5_7", netdev: "ibp220s0", guid: "946d:ae03:00f8:611c", lid: "0xc8", numa: "1"},
	}
	for i, r := range rails {
		rp := fmt.Sprintf("pci0000:%02x/0000:%02x:01.0", r.hb, r.hb)
		usp := fmt.Sprintf("%s/0000:%02x:00.0", rp, r.hb+1)
		tr.bridge(rp, "0x8086", r.numa)
		tr.bridge(usp, "0x1000", r.numa)
		dspNIC := fmt.Sprintf("%s/0000:%02x:00.0", usp, r.hb+2)
		dspGPU := fmt.Sprintf("%s/0000:%02x:03.0", usp, r.hb+2)
		tr.bridge(dspNIC, "0x1000", r.numa)
		tr.bridge(dspGPU, "0x1000", r.numa)

		nic := pciFunc{path: fmt.Sprintf("%s/0000:%02x:00.0", dspNIC, r.hb+3),
			vendor: "0x15b3", device: "0x1021", class: "0x020700", numa: r.numa}
		gpuFn := pciFunc{path: fmt.Sprintf("%s/0000:%02x:00.0", dspGPU, r.hb+6),
			vendor: "0x10de", device: "0x2330", class: "0x030200", numa: r.numa}
		tr.pci(nic)
		tr.pci(gpuFn)

		port := ibPort{linkLayer: "InfiniBand", state: "4: ACTIVE", physState: "5: LinkUp",
			rate: "400 Gb/sec (4X NDR)", lid: r.lid, smLID: "0x1", gids: ibGIDs("fe80:0000:0000:0000", r.guid),
			counters: ibCounters(), hwCounters: mlx5HwCounters(false)}
		if r.down {
			port.state, port.physState, port.rate, port.smLID = "1: DOWN", "2: Polling", "10 Gb/sec (4X SDR)", "0x0"
		}
		tr.rdmaDev(nic, r.hca, r.guid, r.guid, "MT4129", "28.39.1002", port)
		tr.netDev(nic, r.netdev, ipoibAddr(r.guid), "0", "32")
		tr.auxDev(nic, "rdma", i) // an InfiniBand function has no mlx5_core.eth
		tr.charDevs(nic, r.hca, i)

		if i == 0 {
			// An NVSwitch (NVIDIA, class 0x0680: bridge) on a lower bus than the GPU, behind the same switch.
			dsp := fmt.Sprintf("%s/0000:%02x:02.0", usp, r.hb+2)
			tr.bridge(dsp, "0x1000", r.numa)
			tr.pci(pciFunc{path: fmt.Sprintf("%s/0000:%02x:00.0", dsp, r.hb+5),
				vendor: "0x10de", device: "0x22a3", class: "0x068000", numa: r.numa})
		}
	}
	// The BMC's VGA function on the platform root complex.
	tr.bridge("pci0000:00/0000:00:1c.0", "0x8086", "0")
	tr.pci(pciFunc{path: "pci0000:00/0000:00:1c.0/0000:03:00.0", vendor: "0x1a03", device: "0x2000",
		class: "0x030000", numa: "0"})

	// The storage HCA: a ConnectX-6 on its own root complex, on a separate fabric with its own SM; its port GUID
	// is not its node GUID.
	tr.bridge("pci0000:a7/0000:a7:01.0", "0x8086", "1")
	st := pciFunc{path: "pci0000:a7/0000:a7:01.0/0000:a8:00.0", vendor: "0x15b3", device: "0x101b",
		class: "0x020700", numa: "1"}
	tr.pci(st)
	tr.rdmaDev(st, "mlx5_8", "0c42:a103:0077:8a3e", "0c42:a103:0077:8a3e", "MT4123", "20.38.1002",
		ibPort{linkLayer: "InfiniBand", state: "4: ACTIVE", physState: "5: LinkUp", rate: "200 Gb/sec (4X HDR)",
			lid: "0x7", smLID: "0x2", gids: ibGIDs("fe80:0000:0000:0000", "0c42:a103:0077:8a3f"),
			counters: ibCounters(), hwCounters: mlx5HwCounters(false)})
	tr.netDev(st, "ibp168s0", ipoibAddr("0c42:a103:0077:8a3f"), "0", "32")
	tr.auxDev(st, "rdma", 8)
	tr.charDevs(st, "mlx5_8", 8)
}

// roceGIDs is a RoCE GID table as mlx5 fills it: each address twice (RoCE v1, then v2), link-local first.
func roceGIDs(ndev, linkLocal string, addrs ...string) []gidEntry {
	var g []gidEntry
	for _, a := range append([]string{linkLocal}, addrs...) {
		g = append(g, gidEntry{a, "IB/RoCE v1", ndev}, gidEntry{a, "RoCE v2", ndev})
	}
	return append(g, gidEntry{gid: zeroGID}, gidEntry{gid: zeroGID})
}

// buildRoCE writes a RoCE node on a kernel with mlx5's auxiliary bus (every function has its mlx5_core.eth.N
// and mlx5_core.rdma.N): a dual-function ConnectX-6 Dx (mlx5_0, mlx5_1) behind a PCIe switch with one L40S,
// and a ConnectX-7 (mlx5_2, meant for storage) behind a switch with two L40S, which carries an SR-IOV virtual
// function (0000:89:00.1: mlx5_3, ens2f0v0) and a sub-function (mlx5_core.sf.2, sfnum 88: mlx5_4,
// enp137s0f0s88), both on its cable.
func buildRoCE(tr *tree) {
	tr.bridge("pci0000:37/0000:37:01.0", "0x8086", "0")
	tr.bridge("pci0000:37/0000:37:01.0/0000:38:00.0", "0x1000", "0")
	tr.bridge("pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:00.0", "0x1000", "0")
	tr.bridge("pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:01.0", "0x1000", "0")
	f0 := pciFunc{path: "pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:00.0/0000:3a:00.0",
		vendor: "0x15b3", device: "0x101d", class: "0x020000", numa: "0"}
	f1 := pciFunc{path: "pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:00.0/0000:3a:00.1",
		vendor: "0x15b3", device: "0x101d", class: "0x020000", numa: "0"}
	tr.pci(f0)
	tr.pci(f1)
	tr.pci(pciFunc{path: "pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:01.0/0000:3b:00.0",
		vendor: "0x10de", device: "0x26b9", class: "0x030200", numa: "0"})

	eth := func(rate string, gids []gidEntry) ibPort {
		return ibPort{linkLayer: "Ethernet", state: "4: ACTIVE", physState: "5: LinkUp", rate: rate,
			lid: "0x0", smLID: "0x0", gids: gids, counters: ibCounters(), hwCounters: mlx5HwCounters(true)}
	}
	tr.rdmaDev(f0, "mlx5_0", "b83f:d203:004a:1020", "b83f:d203:004a:1020", "MT4125", "22.39.1002",
		eth("100 Gb/sec (4X EDR)", roceGIDs("ens1f0np0", "fe80:0000:0000:0000:ba3f:d2ff:fe4a:1020",
			"0000:0000:0000:0000:0000:ffff:0a0a:0115", "fd00:0010:0001:0000:0000:0000:0000:0021")))
	tr.netDev(f0, "ens1f0np0", "b8:3f:d2:4a:10:20", "0", "1")
	tr.rdmaDev(f1, "mlx5_1", "b83f:d203:004a:1021", "b83f:d203:004a:1020", "MT4125", "22.39.1002",
		eth("100 Gb/sec (4X EDR)", roceGIDs("ens1f1np1", "fe80:0000:0000:0000:ba3f:d2ff:fe4a:1021",
			"0000:0000:0000:0000:0000:ffff:0a0a:0215")))
	tr.netDev(f1, "ens1f1np1", "b8:3f:d2:4a:10:21", "0", "1")

	tr.bridge("pci0000:86/0000:86:01.0", "0x8086", "1")
	tr.bridge("pci0000:86/0000:86:01.0/0000:87:00.0", "0x1000", "1")
	for _, dsp := range []string{"0000:88:00.0", "0000:88:01.0", "0000:88:02.0"} {
		tr.bridge("pci0000:86/0000:86:01.0/0000:87:00.0/"+dsp, "0x1000", "1")
	}
	st := pciFunc{path: "pci0000:86/0000:86:01.0/0000:87:00.0/0000:88:00.0/0000:89:00.0",
		vendor: "0x15b3", device: "0x1021", class: "0x020000", numa: "1"}
	tr.pci(st)
	tr.pci(pciFunc{path: "pci0000:86/0000:86:01.0/0000:87:00.0/0000:88:01.0/0000:8a:00.0",
		vendor: "0x10de", device: "0x26b9", class: "0x030200", numa: "1"})
	tr.pci(pciFunc{path: "pci0000:86/0000:86:01.0/0000:87:00.0/0000:88:02.0/0000:8b:00.0",
		vendor: "0x10de", device: "0x26b9", class: "0x030200", numa: "1"})
	tr.rdmaDev(st, "mlx5_2", "b83f:d203:004a:3040", "b83f:d203:004a:3040", "MT4129", "28.39.1002",
		eth("200 Gb/sec (4X HDR)", roceGIDs("ens2f0np0", "fe80:0000:0000:0000:ba3f:d2ff:fe4a:3040",
			"0000:0000:0000:0000:0000:ffff:ac10:0509")))
	tr.netDev(st, "ens2f0np0", "b8:3f:d2:4a:30:40", "0", "1")

	// The ConnectX-7's virtual function: a PCI function of its own beside the physical one (physfn, virtfn0),
	// with its own RDMA device, interface and auxiliary devices.
	vf := pciFunc{path: "pci0000:86/0000:86:01.0/0000:87:00.0/0000:88:00.0/0000:89:00.1",
		vendor: "0x15b3", device: "0x101e", class: "0x020000", numa: "1"}
	tr.pci(vf)
	tr.link(filepath.Join("devices", vf.path, "physfn"), "../"+st.addr())
	tr.link(filepath.Join("devices", st.path, "virtfn0"), "../"+vf.addr())
	tr.file(filepath.Join("devices", st.path, "sriov_numvfs"), "1")
	tr.file(filepath.Join("devices", st.path, "sriov_totalvfs"), "8")
	tr.rdmaDev(vf, "mlx5_3", "b83f:d203:004a:3042", "b83f:d203:004a:3040", "MT4130", "28.39.1002",
		eth("200 Gb/sec (4X HDR)", roceGIDs("ens2f0v0", "fe80:0000:0000:0000:b83f:d2ff:fe4a:3042")))
	tr.netDev(vf, "ens2f0v0", "ba:3f:d2:4a:30:42", "0", "1")

	// The sub-function: an auxiliary device below the physical function, its RDMA device and interface on it,
	// and its own mlx5_core.eth and mlx5_core.rdma below it.
	sf := tr.auxDev(st, "sf", 2)
	tr.file(filepath.Join("devices", sf.path, "sfnum"), "88")
	tr.rdmaDev(sf, "mlx5_4", "0000:00ff:fe00:8888", "b83f:d203:004a:3040", "MT4129", "28.39.1002",
		eth("200 Gb/sec (4X HDR)", roceGIDs("enp137s0f0s88", "fe80:0000:0000:0000:0200:00ff:fe00:8888")))
	tr.netDev(sf, "enp137s0f0s88", "00:00:00:00:88:88", "0", "1")

	for i, f := range []pciFunc{f0, f1, st, vf, sf} {
		tr.auxDev(f, "eth", i)
		tr.auxDev(f, "rdma", i)
		tr.charDevs(f, fmt.Sprintf("mlx5_%d", i), i)
	}
}

// buildNoRDMA writes a CPU node: one onboard Ethernet port, no class/infiniband.
func buildNoRDMA(tr *tree) {
	fn := pciFunc{path: "pci0000:00/0000:00:1f.6", vendor: "0x8086", device: "0x15fa", class: "0x020000", numa: "-1"}
	tr.pci(fn)
	tr.netDev(fn, "eno1", "3c:ec:ef:01:02:03", "0", "1")
}

// buildFixture returns the root of a private copy of fixture name in a temporary directory; tests that
// damage a fixture work on such a copy. The copy hard-links the files of a template tree built once per test
// binary (filesystem calls are slow on busy machines), so a test must replace a file, never write into it:
// see rdmatest.Replace.
func buildFixture(t testing.TB, name string) string {
	t.Helper()
	return rdmatest.Link(t, template(t, name))
}

var (
	templatesMu  sync.Mutex
	templatesDir string
	templates    = map[string]string{}
)

// template builds fixture name once per test binary and returns its root.
func template(t testing.TB, name string) string {
	t.Helper()
	templatesMu.Lock()
	defer templatesMu.Unlock()
	if root, ok := templates[name]; ok {
		return root
	}
	if templatesDir == "" {
		dir, err := os.MkdirTemp("", "rdma-fixtures-")
		if err != nil {
			t.Fatal(err)
		}
		templatesDir = dir
	}
	root := filepath.Join(templatesDir, name)
	fixtures[name](&tree{t: t, root: root})
	templates[name] = root
	return root
}

func TestMain(m *testing.M) {
	code := m.Run()
	if templatesDir != "" {
		_ = os.RemoveAll(templatesDir)
	}
	os.Exit(code)
}

// fixtureRoot is the committed tree of fixture name.
func fixtureRoot(name string) string { return filepath.Join("testdata", name) }

// TestFixturesMatchBuilders keeps the committed trees equal to what the builders write (or rewrites them
// under -update), so that a fixture is always explained by code.
func TestFixturesMatchBuilders(t *testing.T) {
	for name, build := range fixtures {
		t.Run(name, func(t *testing.T) {
			if *update {
				dst := fixtureRoot(name)
				if err := os.RemoveAll(dst); err != nil {
					t.Fatal(err)
				}
				build(&tree{t: t, root: dst})
			}
			want := snapshot(t, template(t, name))
			got := snapshot(t, fixtureRoot(name))
			for p, w := range want {
				if g, ok := got[p]; !ok {
					t.Errorf("%s: missing from testdata (run with -update)", p)
				} else if g != w {
					t.Errorf("%s: testdata has %q, builder writes %q (run with -update)", p, g, w)
				}
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("%s: in testdata but not written by the builder (run with -update)", p)
				}
			}
		})
	}
}

// snapshot maps every file and symlink of a tree to its content or "-> target".
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) || strings.HasPrefix(target, "/") {
				t.Errorf("%s: absolute symlink %s", p, target)
			}
			m[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(bytes.TrimRight(b, "\n")) + "\n"
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return m
}
