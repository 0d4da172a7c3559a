package topology_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// Shape of the generated fabric: DGX SuperPOD-like scalable units of 32 hosts behind 8 rail leaves; 8 SUs
// share a group of 8 spines; 8 cores join the spine groups. 10,016 hosts make 313 SUs, 40 spine groups; 50,016
// make 1,563 SUs, 196 spine groups.
const (
	scaleHosts       = 10_016
	scaleHosts50k    = 50_016
	scaleHostsPerSU  = 32
	scaleRails       = 8
	scaleSUsPerGroup = 8
	scaleSpines      = 8
	scaleCores       = 8
)

// scaleFabric returns one report per host of a fabric of hosts hosts, as the agents would publish them, and the
// switch links an ibnetdiscover or UFM source would add.
func scaleFabric(hosts int) ([]v1alpha1.NodeFabricReport, []topology.SwitchEdge) {
	leaf := func(su, rail int) string { return fmt.Sprintf("%012x", su*scaleRails+rail) }
	spine := func(group, k int) string { return fmt.Sprintf("5%011x", group*scaleSpines+k) }
	core := func(k int) string { return fmt.Sprintf("c%011x", k) }
	reports := make([]v1alpha1.NodeFabricReport, hosts)
	for h := range reports {
		su := h / scaleHostsPerSU
		r := &reports[h]
		r.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("dgx-%05d", h)}
		for rail := range scaleRails {
			r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{
				Source: v1alpha1.SourceIBNetDiscover, Interface: fmt.Sprintf("mlx5_%d/1", rail),
				ChassisID: leaf(su, rail), ChassisIDSubtype: "guid", PortID: fmt.Sprint(h%scaleHostsPerSU + 1),
				SystemName: fmt.Sprintf("ib-su%03d-leaf-r%d", su, rail),
			})
		}
	}
	var edges []topology.SwitchEdge
	sus := scaleSUs(hosts)
	for su := range sus {
		group := su / scaleSUsPerGroup
		for rail := range scaleRails {
			for k := range scaleSpines {
				edges = append(edges, topology.SwitchEdge{A: "guid:0000" + leaf(su, rail), B: "guid:0000" + spine(group, k), Source: "ibnetdiscover"})
			}
		}
	}
	for group := range (sus + scaleSUsPerGroup - 1) / scaleSUsPerGroup {
		for k := range scaleSpines {
			for c := range scaleCores {
				edges = append(edges, topology.SwitchEdge{A: "guid:0000" + spine(group, k), B: "guid:0000" + core(c), Source: "ibnetdiscover"})
			}
		}
	}
	return reports, edges
}

// scaleSUs is the number of scalable units of a fabric of hosts hosts.
func scaleSUs(hosts int) int { return (hosts + scaleHostsPerSU - 1) / scaleHostsPerSU }

// BenchmarkMerge10kReports is the aggregator's pure work for 10,016 node reports on a 4-tier fabric: reports
// to evidence, the tree, and the HyperNodes. Target: at most 2 s and 1 GiB.
func BenchmarkMerge10kReports(b *testing.B) { benchMerge(b, scaleHosts) }

// BenchmarkMerge50kReports is BenchmarkMerge10kReports at 50,016 reports: the merge is linear when its CPU per
// pass is at most 5.5 times the 10k one's (hack/bench.sh judges the ratio).
func BenchmarkMerge50kReports(b *testing.B) { benchMerge(b, scaleHosts50k) }

// benchMerge runs reports to evidence, the tree and the HyperNodes for a fabric of hosts hosts, and reports
// the peak heap in use and the process's CPU per pass.
func benchMerge(b *testing.B, hosts int) {
	reports, edges := scaleFabric(hosts)
	sus := scaleSUs(hosts)
	want := sus + (sus+scaleSUsPerGroup-1)/scaleSUsPerGroup + 1 // SU leaf domains, spine groups, the core as root
	var peak uint64
	cpu0 := processCPU(b)
	for b.Loop() {
		in := topology.Input{SwitchLinks: edges, Nodes: make([]topology.NodeEvidence, 0, len(reports))}
		for i := range reports {
			in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(&reports[i]))
		}
		tree, problems := topology.Build(in, topology.BuildOptions{})
		if len(problems) > 0 || len(tree.Unplaced) > 0 {
			b.Fatalf("problems %v, unplaced %d", problems[:min(3, len(problems))], len(tree.Unplaced))
		}
		hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(hns) != want {
			b.Fatalf("%d HyperNodes, want %d", len(hns), want)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64((processCPU(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// processCPU is the user plus system time this process has used: on a shared machine with steal time it is
// a steadier figure than wall time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKeepNames10k is the aggregator's naming step on every rebuild at 10,016 hosts: the new tree keeps
// the names of the tree before (topology.KeepNames), here with one host moved to another unit.
func BenchmarkKeepNames10k(b *testing.B) {
	reports, edges := scaleFabric(scaleHosts)
	build := func() *topology.Tree {
		in := topology.Input{SwitchLinks: edges, Nodes: make([]topology.NodeEvidence, 0, len(reports))}
		for i := range reports {
			in.Nodes = append(in.Nodes, pipeline.EvidenceFromReport(&reports[i]))
		}
		t, _ := topology.Build(in, topology.BuildOptions{})
		return t
	}
	prev := build()
	moved := reports[5].Spec.Neighbors
	reports[5].Spec.Neighbors = reports[scaleHostsPerSU+5].Spec.Neighbors
	for b.Loop() {
		b.StopTimer()
		t := build()
		b.StartTimer()
		topology.KeepNames(t, prev)
	}
	reports[5].Spec.Neighbors = moved
}

// BenchmarkRebuild50kMoved is the aggregator's pure work on the pass after 1 % of 50,016 nodes moved to the
// next scalable unit: every report to evidence, the tree, its names kept from the tree before
// (topology.KeepNames), the HyperNodes and the node labels.
func BenchmarkRebuild50kMoved(b *testing.B) {
	reports, edges := scaleFabric(scaleHosts50k)
	evidence := func() []topology.NodeEvidence {
		out := make([]topology.NodeEvidence, 0, len(reports))
		for i := range reports {
			out = append(out, pipeline.EvidenceFromReport(&reports[i]))
		}
		return out
	}
	prev, _ := topology.Build(topology.Input{SwitchLinks: edges, Nodes: evidence()}, topology.BuildOptions{})
	sus := scaleSUs(len(reports))
	for h := 0; h < len(reports); h += 100 {
		to := (h/scaleHostsPerSU + 1) % sus * scaleHostsPerSU
		reports[h].Spec.Neighbors = reports[to].Spec.Neighbors
	}
	keys := hypernodegen.DefaultLabelKeys()
	cpu0 := processCPU(b)
	for b.Loop() {
		nodes := evidence()
		tree, problems := topology.Build(topology.Input{SwitchLinks: edges, Nodes: nodes}, topology.BuildOptions{})
		if len(problems) > 0 {
			b.Fatalf("problems %v", problems[:min(3, len(problems))])
		}
		if replaced := topology.KeepNames(tree, prev); len(replaced) > 0 {
			b.Fatalf("names replaced: %v", replaced)
		}
		if _, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{}); err != nil {
			b.Fatal(err)
		}
		if labels := hypernodegen.DesiredNodeLabels(tree, nodes, keys); len(labels) != len(reports) {
			b.Fatalf("labels for %d nodes, want %d", len(labels), len(reports))
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
