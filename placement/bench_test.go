package placement_test

import (
	"fmt"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
)

// benchCluster builds a leaf/spine fabric of n 8-GPU nodes, 70 % of them fully used.
func benchCluster(b *testing.B, n int) *placement.Cluster {
	b.Helper()
	tr, nodes, err := sim.FabricSpec{Nodes: n}.Build()
	if err != nil {
		b.Fatal(err)
	}
	sim.Fill(nodes, 0.7, 1)
	c, err := sim.NewCluster(tr, nodes)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkPlace places one gang of whole-node (8-GPU) pods, PP = 8, on 1k, 10k and 100k nodes 70 % full; the
// pp=1 cases are the same gangs without PP groups, where the exact fill may run. Targets: 1 ms per gang at 10k
// nodes, 10 ms at 100k.
func BenchmarkPlace(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		c := benchCluster(b, n)
		for _, pods := range []int{8, 64, 512, 2048, 8192} {
			if pods > n*25/100 {
				continue
			}
			for _, pp := range []int{8, 1} {
				g := placement.Gang{Name: "g", Pods: pods, PP: pp, Request: placement.Resources{sim.GPU: 8}}
				name := fmt.Sprintf("nodes=%d/pods=%d", n, pods)
				if pp == 1 {
					name += "/pp=1"
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						if _, err := c.Place(g); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkPreempt searches for victims among 1,000 running preemptible gangs that fill 10k nodes, for a
// higher-priority gang of 256 whole-node pods. Target: 100 ms.
func BenchmarkPreempt(b *testing.B) {
	tr, nodes, err := sim.FabricSpec{Nodes: 10000}.Build()
	if err != nil {
		b.Fatal(err)
	}
	c, err := sim.NewCluster(tr, nodes)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		g := placement.Gang{Name: fmt.Sprintf("run-%04d", i), Pods: 10, PP: 2, Request: placement.Resources{sim.GPU: 8}, Preemptible: true}
		p, err := c.Place(g)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Bind(p, g); err != nil {
			b.Fatal(err)
		}
	}
	g := placement.Gang{Name: "urgent", Pods: 256, PP: 8, Priority: 1, Request: placement.Resources{sim.GPU: 8}}
	for b.Loop() {
		p, err := c.Preempt(g)
		if err != nil || len(p.Victims) == 0 {
			b.Fatal(p, err)
		}
	}
}

// BenchmarkKueueSnapshot mirrors Kueue's snapshot benchmark: build the in-memory snapshot of 2,500 nodes.
// Kueue measured 0.8 ms (no usage) to 2.9 ms (with usage) on this kind of machine.
func BenchmarkKueueSnapshot(b *testing.B) {
	for _, usage := range []bool{false, true} {
		t, nodes := sim.KueueShape(2500, usage)
		b.Run(fmt.Sprintf("nodes=2500/usage=%v", usage), func(b *testing.B) {
			for b.Loop() {
				f, err := placement.NewFabric(t)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := placement.NewCluster(f, nodes, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKueueAssignment mirrors Kueue's assignment benchmark: one podset of 8-CPU pods preferred at the rack
// level, 9 x min(nodes, 256) pods, on 100, 500 and 2,500 nodes. Kueue measured 4.9, 36.6 and 34.5 ms.
func BenchmarkKueueAssignment(b *testing.B) {
	for _, n := range []int{100, 500, 2500} {
		t, nodes := sim.KueueShape(n, false)
		c, err := sim.NewCluster(t, nodes)
		if err != nil {
			b.Fatal(err)
		}
		g := sim.KueuePodset(n)
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", n, g.Pods), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Place(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
