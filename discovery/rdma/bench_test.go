package rdma

import (
	"context"
	"testing"

	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
)

// BenchmarkRun is one probe run on the DGX H100 fixture: as a tree at its own path (no counters, no character
// devices) and at /sys in a mount namespace, where rdmamap reads the device list, the interfaces' devices, the
// character devices and every counter of every port, as on a node.
func BenchmarkRun(b *testing.B) {
	for _, tc := range []struct {
		name, root string
		live       bool
	}{{"tree", fixtureRoot("dgx-h100-ib"), false}, {"live", "/sys", true}} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := New(discovery.Config{SysfsRoot: tc.root}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			var probe discovery.Probe = p
			if tc.live {
				probe = rdmatest.Mount(b, fixtureRoot("dgx-h100-ib")).Probe(p)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := probe.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
