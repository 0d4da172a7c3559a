// Package ibnetdiscovertest writes ibnetdiscover captures of generated fabrics, for the tests and benchmarks
// of every package that reads them (the parser, the probe, sources/ibfabric, the CLI).
package ibtest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// FatTree is the shape of a rail-optimised fat tree in the manner of a DGX SuperPOD. Hosts come in scalable
// units (SUs); every host has one compute HCA per rail, cabled to its SU's leaf of that rail. Groups of SUs
// share spines: every leaf of a group is cabled to every spine of it. With cores, the spines of one index in
// every group form a plane, each spine cabled to every core of its plane. Optionally, every switch carries a
// SHARP aggregation node, and one HCA is down (so absent from the capture, as ibnetdiscover cannot reach it).
type FatTree struct {
	// Hosts is the number of hosts; the last SU holds what is left.
	Hosts int
	// HostsPerSU is the number of hosts per SU; a leaf's host ports are 1 to HostsPerSU.
	HostsPerSU int
	// Rails is the number of compute HCAs per host, one rail leaf each.
	Rails int
	// Devices are the HCAs' device names by rail; "mlx5_<rail-1>" when shorter.
	Devices []string
	// SUsPerGroup is the number of SUs that share one group of spines; 0 puts all SUs in one group.
	SUsPerGroup int
	// Spines is the number of spines per group.
	Spines int
	// SpineLinks is the number of parallel cables from each leaf to each spine (at least 1).
	SpineLinks int
	// LeafUplink0 is the first leaf port facing the spines; HostsPerSU+1 when 0.
	LeafUplink0 int
	// CoresPerPlane is the number of cores above each plane of spines; 0 makes a two-tier fabric.
	CoresPerPlane int
	// Ports is the port count every switch declares; its last port carries the aggregation node.
	Ports int
	// AggregationNodes gives every switch a SHARP aggregation node on its last port.
	AggregationNodes bool
	// DownHost and DownRail (both from 1) name the one HCA whose link is down; 0 for none.
	DownHost, DownRail int
}

// SuperPOD is the shape of the committed testdata/superpod.txt of ib: 2 SUs of 16 DGX
// H100 hosts, 8 rails, 8 spines with 2 cables from each leaf, aggregation nodes, and dgx-021's rail-6 HCA
// (mlx5_9) down.
func SuperPOD() FatTree {
	return FatTree{
		Hosts: 32, HostsPerSU: 16, Rails: 8,
		Devices: []string{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"},
		Spines:  8, SpineLinks: 2, LeafUplink0: 33, Ports: 65, AggregationNodes: true, DownHost: 21, DownRail: 6,
	}
}

// Scale is a three-tier fabric of hosts hosts for scale tests: SUs of 32 hosts on 8 rails (so 32-host leaves), 8
// SUs per group of 8 spines, 2 cores per plane, aggregation nodes.
func Scale(hosts int) FatTree {
	t := SuperPOD()
	t.Hosts, t.HostsPerSU, t.SUsPerGroup, t.SpineLinks, t.CoresPerPlane = hosts, 32, 8, 1, 2
	t.LeafUplink0, t.Ports, t.DownHost, t.DownRail = 0, 129, 0, 0
	return t
}

// SUs is the number of scalable units.
func (t FatTree) SUs() int { return (t.Hosts + t.HostsPerSU - 1) / t.HostsPerSU }

// Groups is the number of spine groups.
func (t FatTree) Groups() int {
	if t.SUsPerGroup <= 0 {
		return 1
	}
	return (t.SUs() + t.SUsPerGroup - 1) / t.SUsPerGroup
}

// HostName names host h (from 1): "dgx-" and at least three digits, as many as the largest host needs.
func (t FatTree) HostName(h int) string {
	width := max(3, len(strconv.Itoa(t.Hosts)))
	return fmt.Sprintf("dgx-%0*d", width, h)
}

// LeafName names the leaf of SU su and rail (both from 1).
func (t FatTree) LeafName(su, rail int) string { return fmt.Sprintf("ib-su%d-leaf-r%d", su, rail) }

// SpineName names spine k (from 1, counted across groups).
func (t FatTree) SpineName(k int) string { return fmt.Sprintf("ib-spine-%02d", k) }

// CoreName names core k (from 1).
func (t FatTree) CoreName(k int) string { return fmt.Sprintf("ib-core-%02d", k) }

// LeafGUID is the node GUID of the leaf of SU su and rail (both from 1).
func (t FatTree) LeafGUID(su, rail int) string {
	return fmt.Sprintf("b83fd20300%06x", 0xe20000+su*0x100+rail)
}

// SpineGUID is the node GUID of spine k (from 1, counted across groups).
func (t FatTree) SpineGUID(k int) string { return fmt.Sprintf("b83fd20300%06x", 0xe10000+k) }

// CoreGUID is the node GUID of core k (from 1).
func (t FatTree) CoreGUID(k int) string { return fmt.Sprintf("b83fd20300%06x", 0xe00000+k) }

// HCAGUID is the node GUID of host h's HCA of rail (both from 1).
func (t FatTree) HCAGUID(h, rail int) string {
	return fmt.Sprintf("946dae0300%06x", 0x100000+h*0x100+rail)
}

// Device names the HCA of rail (from 1).
func (t FatTree) Device(rail int) string {
	if rail <= len(t.Devices) {
		return t.Devices[rail-1]
	}
	return "mlx5_" + strconv.Itoa(rail-1)
}

// node is one switch or CA of the generated fabric.
type node struct {
	isSwitch bool
	guid     string // 16 hex digits
	desc     string
	lid      int
	ports    int
	devid    int
	peers    []peer // by port number
}

type peer struct {
	node *node
	port int
}

// maxUnicastLID is the largest unicast LID; generated LIDs wrap around below it (a fabric of more ports
// than LIDs cannot exist in one subnet, but the LIDs play no part in the topology).
const maxUnicastLID = 0xbfff

// WriteTo writes the fabric in ibnetdiscover's default output format: the switches' blocks (spines, leaves,
// cores), then the CAs' (aggregation nodes, then the hosts' HCAs). It returns the bytes written.
func (t FatTree) WriteTo(w io.Writer) (int64, error) {
	if t.Hosts <= 0 || t.HostsPerSU <= 0 || t.Rails <= 0 || t.Spines <= 0 || t.Ports <= 0 {
		return 0, fmt.Errorf("fat tree %+v: hosts, SU size, rails, spines and ports must be positive", t)
	}
	spineLinks := max(1, t.SpineLinks)
	uplink0 := t.LeafUplink0
	if uplink0 == 0 {
		uplink0 = t.HostsPerSU + 1
	}
	lid := 0
	nextLID := func() int { lid++; return (lid-1)%maxUnicastLID + 1 }
	newSwitch := func(name, guid string) *node {
		return &node{isSwitch: true, guid: guid, desc: "MF0;" + name + ":MQM9700/U1",
			lid: nextLID(), ports: t.Ports, devid: 0xd2f0, peers: make([]peer, t.Ports+1)}
	}
	var failed error
	connect := func(a *node, ap int, b *node, bp int) {
		if ap >= len(a.peers) || bp >= len(b.peers) || a.peers[ap].node != nil || b.peers[bp].node != nil {
			failed = fmt.Errorf("fat tree %+v: port %s[%d] or %s[%d] is out of range or taken", t, a.desc, ap, b.desc, bp)
			return
		}
		a.peers[ap] = peer{b, bp}
		b.peers[bp] = peer{a, ap}
	}

	groups, sus := t.Groups(), t.SUs()
	susPerGroup := sus
	if t.SUsPerGroup > 0 {
		susPerGroup = t.SUsPerGroup
	}
	spines := make([]*node, 0, groups*t.Spines)
	for k := 1; k <= groups*t.Spines; k++ {
		spines = append(spines, newSwitch(t.SpineName(k), t.SpineGUID(k)))
	}
	leaves := make([]*node, 0, sus*t.Rails)
	for su := 1; su <= sus; su++ {
		for r := 1; r <= t.Rails; r++ {
			leaves = append(leaves, newSwitch(t.LeafName(su, r), t.LeafGUID(su, r)))
		}
	}
	var cores []*node
	for k := 1; k <= t.Spines*t.CoresPerPlane; k++ {
		cores = append(cores, newSwitch(t.CoreName(k), t.CoreGUID(k)))
	}
	for li, leaf := range leaves {
		group, inGroup := li/(susPerGroup*t.Rails), li%(susPerGroup*t.Rails)
		for si := 0; si < t.Spines; si++ {
			for c := 0; c < spineLinks; c++ {
				connect(leaf, uplink0+si*spineLinks+c, spines[group*t.Spines+si], inGroup*spineLinks+c+1)
			}
		}
	}
	for si, spine := range spines {
		group, k := si/t.Spines, si%t.Spines
		for c := 0; c < t.CoresPerPlane; c++ {
			connect(spine, susPerGroup*t.Rails*spineLinks+c+1, cores[k*t.CoresPerPlane+c], group+1)
		}
	}
	switches := append(append(append([]*node{}, spines...), leaves...), cores...)
	var cas []*node
	if t.AggregationNodes {
		for i, sw := range switches {
			an := &node{guid: fmt.Sprintf("b83fd20300%06x", 0xa00000+i+1), desc: "Mellanox Technologies Aggregation Node",
				lid: nextLID(), ports: 1, devid: 0xcf09, peers: make([]peer, 2)}
			connect(sw, t.Ports, an, 1)
			cas = append(cas, an)
		}
	}
	for h := 1; h <= t.Hosts; h++ {
		su := (h-1)/t.HostsPerSU + 1
		for r := 1; r <= t.Rails; r++ {
			if h == t.DownHost && r == t.DownRail {
				continue // link down: the HCA is unreachable, so ibnetdiscover never sees it
			}
			ca := &node{guid: t.HCAGUID(h, r), desc: t.HostName(h) + " " + t.Device(r),
				lid: nextLID(), ports: 1, devid: 0x1021, peers: make([]peer, 2)}
			connect(leaves[(su-1)*t.Rails+r-1], (h-1)%t.HostsPerSU+1, ca, 1)
			cas = append(cas, ca)
		}
	}
	if failed != nil {
		return 0, failed
	}
	return writeCapture(w, switches, cas)
}

// writeCapture prints the nodes' blocks as ibnetdiscover does.
func writeCapture(w io.Writer, switches, cas []*node) (int64, error) {
	cw := &countingWriter{w: w}
	b := bufio.NewWriterSize(cw, 64<<10)
	b.WriteString("#\n# Topology file: generated on Tue Apr  8 09:30:12 2025\n#\n")
	for _, ca := range cas {
		if ca.devid != 0xcf09 { // the first host HCA
			fmt.Fprintf(b, "# Initiated from node %s port %s\n", ca.guid, ca.guid)
			break
		}
	}
	for _, sw := range switches {
		fmt.Fprintf(b, "\nvendid=0x2c9\ndevid=0x%x\nsysimgguid=0x%s\nswitchguid=0x%s(%s)\n", sw.devid, trim0(sw.guid), trim0(sw.guid), trim0(sw.guid))
		fmt.Fprintf(b, "Switch\t%d \"S-%s\"\t\t# \"%s\" enhanced port 0 lid %d lmc 0\n", sw.ports, sw.guid, sw.desc, sw.lid)
		for p := 1; p <= sw.ports; p++ {
			peer := sw.peers[p]
			switch {
			case peer.node == nil:
			case peer.node.isSwitch:
				fmt.Fprintf(b, "[%d]\t\"S-%s\"[%d]\t\t# \"%s\" lid %d 4xNDR\n", p, peer.node.guid, peer.port, peer.node.desc, peer.node.lid)
			default:
				fmt.Fprintf(b, "[%d]\t\"H-%s\"[%d](%s) \t\t# \"%s\" lid %d 4xNDR\n", p, peer.node.guid, peer.port, trim0(peer.node.guid), peer.node.desc, peer.node.lid)
			}
		}
	}
	for _, ca := range cas {
		sysimg := ca.guid
		if ca.devid == 0xcf09 {
			sysimg = ca.peers[1].node.guid // an aggregation node shares its switch's system image
		}
		fmt.Fprintf(b, "\nvendid=0x2c9\ndevid=0x%x\nsysimgguid=0x%s\ncaguid=0x%s\n", ca.devid, trim0(sysimg), trim0(ca.guid))
		fmt.Fprintf(b, "Ca\t%d \"H-%s\"\t\t# \"%s\"\n", ca.ports, ca.guid, ca.desc)
		peer := ca.peers[1]
		fmt.Fprintf(b, "[1](%s) \t\"S-%s\"[%d]\t\t# lid %d lmc 0 \"%s\" lid %d 4xNDR\n", trim0(ca.guid), peer.node.guid, peer.port, ca.lid, peer.node.desc, peer.node.lid)
	}
	err := b.Flush()
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// trim0 prints a GUID the way ibnetdiscover's "%" PRIx64 does: without leading zeros.
func trim0(g string) string {
	for len(g) > 1 && g[0] == '0' {
		g = g[1:]
	}
	return g
}
