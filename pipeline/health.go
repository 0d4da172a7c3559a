package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery/pciaddr"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
)

// AssessHealth judges the fabric's links: the tree, the ports of reports (HealthPorts), the switch-to-switch
// links with their speeds, when an admin approved one, the expected tree (nil: no drift check), and the nodes
// that lost all their uplink evidence (the aggregator's own, or those UplinkLostAnnotation states:
// LostUplinksFromNodes) and those that lost some of their switches (the aggregator's own, or those
// SwitchLostAnnotation states: LostSwitchesFromNodes). The aggregator and `fabricmap get health` both call it, so that they judge the same
// input alike.
func AssessHealth(tree *topology.Tree, reports []*v1alpha1.NodeFabricReport, links []health.Link, expected *topology.Tree, lost []health.LostUplink,
	lostSwitches []health.LostSwitch) health.Assessment {
	if tree == nil {
		tree = topology.NewTree()
	}
	return health.Assess(health.Input{Tree: tree, Nodes: HealthPorts(reports), SwitchLinks: links, Expected: expected, LostUplinks: lost, LostSwitches: lostSwitches})
}

// HealthPorts turns reports into the health package's view of their RDMA ports: each port with its device
// and number, its rail (the index of the GPU nearest its device), the switch its neighbour names (by the
// identifier topology evidence uses, topology.SwitchID, as EvidenceFromReport gives it), its trained rate
// and width, its class and the agent's judgement of its link. A port's neighbour is the one whose Interface
// is "<device>/<port>" (InfiniBand), else the one on the port's network interface (RoCE, seen by LLDP).
func HealthPorts(reports []*v1alpha1.NodeFabricReport) []health.NodePorts {
	out := make([]health.NodePorts, 0, len(reports))
	for i := range reports {
		out = append(out, nodePorts(reports[i]))
	}
	return out
}

// nodePorts is one report's ports.
func nodePorts(r *v1alpha1.NodeFabricReport) health.NodePorts {
	type neighbour struct {
		switchID string
		storage  bool
	}
	byInterface := map[string]neighbour{}
	for _, n := range r.Spec.Neighbors {
		if _, seen := byInterface[n.Interface]; !seen { // two probes may see one neighbour: the first is kept
			byInterface[n.Interface] = neighbour{switchID: topology.SwitchID(n.ChassisIDSubtype, n.ChassisID), storage: n.Class == v1alpha1.PortClassStorage}
		}
	}
	np := health.NodePorts{Node: r.Name}
	for _, d := range r.Spec.RDMADevices {
		rail := railOf(d.NearestGPU, r.Spec.GPUs)
		for _, p := range d.Ports {
			nb, ok := byInterface[d.Name+"/"+strconv.Itoa(int(p.Number))]
			if !ok && p.NetDev != "" {
				nb = byInterface[p.NetDev]
			}
			port := health.Port{Device: d.Name, Number: p.Number, Rail: rail, Switch: nb.switchID,
				RateGbps: p.RateGbps, Width: p.Width, Storage: p.Class == v1alpha1.PortClassStorage || nb.storage}
			if h := p.Health; h != nil {
				port.Condition, port.Reason, port.Message = string(h.Condition), h.Reason, h.Message
			}
			np.Ports = append(np.Ports, port)
		}
	}
	return np
}

// railOf is the rail of a device whose nearest GPU is nearest: the index of that GPU among gpus, matched by
// UUID or PCI address (the agent names the GPU by its PCI address when the GPU probe did not run or did not
// know it); else a bare index, or a name "GPU-<index>" as fixtures write it; else -1, not known. A GPU's PCI
// address alone gives no rail: the order of the addresses is not the GPUs' index when a device is missing.
func railOf(nearest string, gpus []v1alpha1.GPU) int {
	if nearest == "" {
		return -1
	}
	addr, addrErr := pciaddr.Normalize(nearest)
	for _, g := range gpus {
		if g.UUID == nearest {
			return int(g.Index)
		}
		if addrErr == nil && g.PCIBusID != "" {
			if ga, err := pciaddr.Normalize(g.PCIBusID); err == nil && ga == addr {
				return int(g.Index)
			}
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(nearest, "GPU-")); err == nil && n >= 0 {
		return n
	}
	return -1
}

// SwitchLinksFromFabric lists the switch-to-switch cables of an ibnetdiscover capture with their trained
// width and rate, each end named by its tree identifier (topology.SwitchID of the switch's GUID): the
// health package's switch links. Parallel cables are listed each; a cable whose width or speed the capture
// does not print has rate 0 and width "".
func SwitchLinksFromFabric(f *ib.Fabric) []health.Link {
	if f == nil {
		return nil
	}
	var out []health.Link
	for _, l := range f.Links {
		if l.A.Kind != ib.KindSwitch || l.B.Kind != ib.KindSwitch || l.A.GUID == l.B.GUID {
			continue
		}
		width, rate := ibLinkRate(l.Width, l.Speed)
		out = append(out, health.Link{From: topology.SwitchID("guid", string(l.A.GUID)), To: topology.SwitchID("guid", string(l.B.GUID)),
			RateGbps: rate, Width: width, Source: ibfabric.Name})
	}
	return out
}

// laneGbps is the signalling rate of one lane at each InfiniBand speed, in Gb/s, as the kernel counts it in
// a port's rate ("400 Gb/sec (4X NDR)").
var laneGbps = map[string]float64{
	"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200,
}

// ibLinkRate turns a capture's width and speed ("4x", "NDR") into the report's form: the width as the
// kernel prints it ("4X") and the rate in Gb/s (400). What it cannot read gives "" and 0.
func ibLinkRate(width, speed string) (string, int32) {
	lanes, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(width), "x"))
	if err != nil || lanes <= 0 {
		return "", 0
	}
	w := fmt.Sprintf("%dX", lanes)
	per, ok := laneGbps[strings.ToUpper(speed)]
	if !ok {
		return w, 0
	}
	return w, int32(math.Round(float64(lanes) * per))
}

// EventReason is the reason of the Warning Event a finding of kind k records on its Node: the kind in
// CamelCase ("miscabled-rail" → "MiscabledRail").
func EventReason(k health.Kind) string {
	var b strings.Builder
	for _, part := range strings.Split(string(k), "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
