package health_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

// Shape of the generated fabric, as topology's BenchmarkMerge10kReports: scalable units of 32 hosts behind 8
// rail leaves, 8 SUs per group of 8 spines, 8 cores; 10,016 hosts make 313 SUs and 40 spine groups. Every
// host also has a storage port.
const (
	scaleHosts       = 10_016
	scaleHostsPerSU  = 32
	scaleRails       = 8
	scaleSUsPerGroup = 8
	scaleSpines      = 8
	scaleCores       = 8
)

// The faults the generated fabric carries, each to be found once.
const (
	crossedHost   = 5    // rails 0 and 1 swapped
	slowHost      = 100  // mlx5_3 at 200 Gb/s
	downHost      = 200  // mlx5_6 down
	erroringHost  = 300  // mlx5_2 with symbol errors
	plannedElse   = 9000 // in the plan, behind the SU of host 0
	slowUplinkSU  = 3    // the uplink of this SU's rail-2 leaf to its group's first spine at 200 Gb/s
	wantFindings  = 2 + 1 + 1 + 1 + 1 + 1
	scaleSUs      = (scaleHosts + scaleHostsPerSU - 1) / scaleHostsPerSU
	scaleGroups   = (scaleSUs + scaleSUsPerGroup - 1) / scaleSUsPerGroup
	scaleStorage  = "guid:5700000000000001"
	scaleRateGbps = 400
)

func scaleLeaf(su, rail int) string { return fmt.Sprintf("guid:0000%012x", su*scaleRails+rail) }
func scaleSpine(group, k int) string {
	return fmt.Sprintf("guid:00005%011x", group*scaleSpines+k)
}
func scaleCore(k int) string { return fmt.Sprintf("guid:0000c%011x", k) }
func scaleHost(h int) string { return fmt.Sprintf("dgx-%05d", h) }

// scaleFabric returns the evidence the tree is inferred from, the evidence of the plan (the same fabric with
// host plannedElse in another SU), the hosts' ports and the switch links with their speeds.
func scaleFabric() (in, plan topology.Input, nodes []health.NodePorts, links []health.Link) {
	nodes = make([]health.NodePorts, scaleHosts)
	for h := range scaleHosts {
		su := h / scaleHostsPerSU
		e := topology.NodeEvidence{Node: scaleHost(h), Source: "reports", SelfReported: true}
		planned := e
		np := &nodes[h]
		np.Node = e.Node
		for rail := range scaleRails {
			leaf := scaleLeaf(su, rail)
			e.Links = append(e.Links, topology.SwitchLink{SwitchID: leaf})
			planned.Links = append(planned.Links, topology.SwitchLink{SwitchID: leaf})
			if h == plannedElse {
				planned.Links[rail].SwitchID = scaleLeaf(0, rail)
			}
			p := health.Port{Device: fmt.Sprintf("mlx5_%d", rail), Number: 1, Rail: rail, Switch: leaf,
				RateGbps: scaleRateGbps, Width: "4X", Condition: "Healthy"}
			switch {
			case h == crossedHost && rail < 2:
				p.Switch = scaleLeaf(su, 1-rail)
			case h == slowHost && rail == 3:
				p.RateGbps = 200
			case h == downHost && rail == 6:
				p.Condition, p.Reason = "Down", "PortDown"
			case h == erroringHost && rail == 2:
				p.Condition, p.Reason, p.Message = "Degraded", "SymbolErrors", "1200 symbol errors in 30s"
			}
			np.Ports = append(np.Ports, p)
		}
		storageLink := topology.SwitchLink{SwitchID: scaleStorage, Storage: true}
		e.Links, planned.Links = append(e.Links, storageLink), append(planned.Links, storageLink)
		np.Ports = append(np.Ports, health.Port{Device: "mlx5_8", Number: 1, Rail: -1, Switch: scaleStorage,
			RateGbps: 200, Width: "4X", Storage: true, Condition: "Healthy"})
		in.Nodes, plan.Nodes = append(in.Nodes, e), append(plan.Nodes, planned)
	}
	for su := range scaleSUs {
		group := su / scaleSUsPerGroup
		for rail := range scaleRails {
			for k := range scaleSpines {
				l := health.Link{From: scaleLeaf(su, rail), To: scaleSpine(group, k), RateGbps: scaleRateGbps, Width: "4X", Source: "ibnetdiscover"}
				if su == slowUplinkSU && rail == 2 && k == 0 {
					l.RateGbps = 200
				}
				links = append(links, l)
			}
		}
	}
	for group := range scaleGroups {
		for k := range scaleSpines {
			for c := range scaleCores {
				links = append(links, health.Link{From: scaleSpine(group, k), To: scaleCore(c), RateGbps: scaleRateGbps, Width: "4X", Source: "ibnetdiscover"})
			}
		}
	}
	for _, l := range links {
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: l.From, B: l.To, Source: l.Source})
	}
	plan.SwitchLinks = in.SwitchLinks
	return in, plan, nodes, links
}

// BenchmarkAssess10k is the aggregator's pure work for fabric health at 10,016 nodes: the tree inferred from
// the evidence (as BenchmarkMerge10kReports does) and Assess on it with every host's nine ports, 21,000
// switch links and a plan to drift from. Target: at most 2 s for both. assess-ms/op is Assess alone.
func BenchmarkAssess10k(b *testing.B) {
	in, planIn, nodes, links := scaleFabric()
	plan, problems := topology.Build(planIn, topology.BuildOptions{})
	if len(problems) > 0 {
		b.Fatalf("the plan: %v", problems[:min(3, len(problems))])
	}
	var assess time.Duration
	for b.Loop() {
		tree, problems := topology.Build(in, topology.BuildOptions{})
		if len(problems) > 0 || len(tree.Unplaced) > 0 {
			b.Fatalf("problems %v, unplaced %d", problems[:min(3, len(problems))], len(tree.Unplaced))
		}
		start := time.Now()
		got := health.Assess(health.Input{Tree: tree, Nodes: nodes, SwitchLinks: links, Expected: plan})
		assess += time.Since(start)
		// Two crossed cables, a slow port, a down one, an erroring one, a slow uplink, a host moved.
		if len(got.Findings) != wantFindings || len(got.DegradedNodes) != 4 || len(got.DegradedUplinks) != 1 {
			b.Fatalf("%d findings (want %d), degraded nodes %v, degraded uplinks %v:\n%v",
				len(got.Findings), wantFindings, got.DegradedNodes, got.DegradedUplinks, got.Findings)
		}
	}
	b.ReportMetric(float64(assess.Milliseconds())/float64(b.N), "assess-ms/op")
}
