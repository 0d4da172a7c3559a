package peers

import (
	"fmt"
	"testing"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
)

// BenchmarkPeers times one gang placement by fabricmap and by each peer on the shapes of placement's
// BenchmarkPlace: 1k, 10k and 100k 8-GPU nodes, 70 % full, gangs of 8 to 8,192 whole-node pods (PP = 8).
func BenchmarkPeers(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		tr, nodes, err := sim.FabricSpec{Nodes: n}.Build()
		if err != nil {
			b.Fatal(err)
		}
		sim.Fill(nodes, 0.7, 1)
		c, err := sim.NewCluster(tr, nodes)
		if err != nil {
			b.Fatal(err)
		}
		viewOf(c.Fabric())
		for _, pods := range []int{8, 64, 512, 2048, 8192} {
			if pods > n*25/100 {
				continue
			}
			g := placement.Gang{Name: "g", Pods: pods, PP: 8, Request: placement.Resources{sim.GPU: 8}}
			for _, p := range placers {
				b.Run(fmt.Sprintf("nodes=%d/pods=%d/placer=%s", n, pods, p.Name()), func(b *testing.B) {
					for b.Loop() {
						if _, err := p.Place(c, g); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkPeersKueueShape runs fabricmap and every peer on the shape of Kueue's TAS assignment benchmark: one
// podset of 8-CPU pods, 9 x min(nodes, 256) of them, on 100, 500 and 2,500 nodes of racks and blocks.
func BenchmarkPeersKueueShape(b *testing.B) {
	for _, n := range []int{100, 500, 2500} {
		tr, nodes := sim.KueueShape(n, false)
		c, err := sim.NewCluster(tr, nodes)
		if err != nil {
			b.Fatal(err)
		}
		viewOf(c.Fabric())
		g := sim.KueuePodset(n)
		for _, p := range placers {
			b.Run(fmt.Sprintf("nodes=%d/pods=%d/placer=%s", n, g.Pods, p.Name()), func(b *testing.B) {
				for b.Loop() {
					if _, err := p.Place(c, g); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
