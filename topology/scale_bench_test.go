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
// share a group of 8 spines; 8 cores join the spine groups. 10,016 hosts make 313 SUs, 40 spine groups.
const (
	scaleHosts       = 10_016
	scaleHostsPerSU  = 32
	scaleRails       = 8
	scaleSUsPerGroup = 8
	scaleSpines      = 8
	scaleCores       = 8
)

// scaleFabric returns one report per host, as the agents would publish them, and the switch links an
// ibnetdiscover or UFM source would add.
func scaleFabric() ([]v1alpha1.NodeFabricReport, []topology.SwitchEdge) {
	leaf := func(su, rail int) string { return fmt.Sprintf("%012x", su*scaleRails+rail) }
	spine := func(group, k int) string { return fmt.Sprintf("5%011x", group*scaleSpines+k) }
	core := func(k int) string { return fmt.Sprintf("c%011x", k) }
	reports := make([]v1alpha1.NodeFabricReport, scaleHosts)
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
	sus := (scaleHosts + scaleHostsPerSU - 1) / scaleHostsPerSU
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

// BenchmarkMerge10kReports is the aggregator's pure work for 10,016 node reports on a 4-tier fabric: reports
// to evidence, the tree, and the HyperNodes. Target: at most 2 s and 1 GiB.
func BenchmarkMerge10kReports(b *testing.B) {
	reports, edges := scaleFabric()
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
		// 313 SU leaf domains, 40 spine groups, the core as root.
		if len(hns) != 313+40+1 {
			b.Fatalf("%d HyperNodes, want 354", len(hns))
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
	reports, edges := scaleFabric()
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
