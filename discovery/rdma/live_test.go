package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
)

// TestLiveSysfsMatchesTree scans each fixture twice: as a tree at its own path (the probe reads everything
// itself) and at /sys in a mount namespace (the agent's way: rdmamap lists the devices, the devices of each
// interface's bus device, the character devices and the counters). Both must see the same devices; only
// rdmamap adds character devices and counters.
func TestLiveSysfsMatchesTree(t *testing.T) {
	for _, fixture := range []string{"dgx-h100-ib", "roce"} {
		t.Run(fixture, func(t *testing.T) {
			tree, err := Scan(context.Background(), fixtureRoot(fixture), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var live Report
			rdmatest.Mount(t, fixtureRoot(fixture)).Do(func() {
				live, err = Scan(context.Background(), "/sys", Options{CharDevices: true})
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(live.Warnings) != 0 {
				t.Errorf("warnings %q", live.Warnings)
			}
			api, _ := ToAPI(live.Devices, nil) // the report names the umad device the ibnetdiscover probe needs
			for _, d := range api {
				if want := "umad" + d.Name[5:]; !slices.Contains(d.CharDevices, want) {
					t.Errorf("report device %s: character devices %q lack %s", d.Name, d.CharDevices, want)
				}
			}
			for i, d := range live.Devices {
				want := []string{"issm" + d.Name[5:], "umad" + d.Name[5:], "uverbs" + d.Name[5:]}
				if diff := cmp.Diff(want, d.CharDevices); diff != "" {
					t.Errorf("%s: character devices (-want +got):\n%s", d.Name, diff)
				}
				for j, p := range d.Ports {
					c := p.Counters
					switch {
					case d.Virtual() && c != nil:
						t.Errorf("%s port %d: counters of a virtual device read: %v", d.Name, p.Number, c)
					case !d.Virtual() && (len(c) != 21+len(mlx5HwCounters(p.LinkLayer == LinkLayerEthernet)) ||
						c["link_downed"] != 1 || c["symbol_error"] != 0 || c["port_xmit_data"] != 80112755023 ||
						c["rx_write_requests"] != 88812 || c["lifespan"] != 10):
						t.Errorf("%s port %d: counters %v", d.Name, p.Number, c)
					}
					live.Devices[i].Ports[j].Counters = nil
				}
				live.Devices[i].CharDevices = nil
			}
			live.Root = tree.Root
			if diff := cmp.Diff(tree, live, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("the live scan differs from the tree's (-tree +live):\n%s", diff)
			}
		})
	}
}

// TestLiveInterfacesOfVirtualDevices finds the interfaces of a virtual function and of a sub-function from
// their bus devices alone (rdmamap's RDMA devices of a PCI function and of an auxiliary device) when their GID
// tables name none, as when their ports are down.
func TestLiveInterfacesOfVirtualDevices(t *testing.T) {
	root := buildFixture(t, "roce")
	for _, dev := range []string{"mlx5_3", "mlx5_4"} {
		if err := os.RemoveAll(filepath.Join(root, "class/infiniband", dev, "ports/1/gid_attrs/ndevs")); err != nil {
			t.Fatal(err)
		}
	}
	var rep Report
	var err error
	rdmatest.Mount(t, root).Do(func() { rep, err = Scan(context.Background(), "/sys", Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range rep.Devices {
		got[d.Name] = d.Ports[0].NetDev
	}
	want := map[string]string{"mlx5_0": "ens1f0np0", "mlx5_1": "ens1f1np1", "mlx5_2": "ens2f0np0",
		"mlx5_3": "ens2f0v0", "mlx5_4": "enp137s0f0s88"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
}

// TestProbeJudgesLiveCounters runs the probe as the agent does, on a fixture at /sys: the first run judges
// states only; counters that climb between runs degrade their port, once rdmamap reads them. A port trained at
// 2X among 4X peers is reported with its rate and width, for the aggregator to judge against its peers.
func TestProbeJudgesLiveCounters(t *testing.T) {
	root := buildFixture(t, "dgx-h100-ib")
	now := time.Unix(1_800_000_000, 0)
	p, err := New(discovery.Config{SysfsRoot: "/sys"}, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	live := rdmatest.Mount(t, root).Probe(p)
	health := func() map[string]string {
		t.Helper()
		res, err := live.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, d := range res.RDMADevices {
			for _, port := range d.Ports {
				if h := port.Health; h != nil && h.Condition != v1alpha1.LinkHealthy {
					m[d.Name] = fmt.Sprintf("%s/%s: %s", h.Condition, h.Reason, h.Message)
				}
				if d.Name == "mlx5_3" {
					m["mlx5_3 rate"] = fmt.Sprintf("%d %s", port.RateGbps, port.Width)
				}
			}
		}
		return m
	}
	want := map[string]string{"mlx5_5": "Down/PortDown: state DOWN, physical state Polling", "mlx5_3 rate": "400 4X"}
	if diff := cmp.Diff(want, health()); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}

	now = now.Add(5 * time.Minute)
	rdmatest.Replace(t, filepath.Join(root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error"), "1200")
	rdmatest.Replace(t, filepath.Join(root, "class/infiniband/mlx5_6/ports/1/counters/link_downed"), "2")
	rdmatest.Replace(t, filepath.Join(root, "class/infiniband/mlx5_3/ports/1/rate"), "200 Gb/sec (2X NDR)")
	want = map[string]string{
		"mlx5_0":      "Degraded/SymbolErrors: symbol_error rose by 1200 in 5m0s (threshold 10 per hour)",
		"mlx5_5":      want["mlx5_5"],
		"mlx5_6":      "Degraded/LinkDowned: link_downed rose by 1 in 5m0s: the link went down",
		"mlx5_3 rate": "200 2X",
	}
	if diff := cmp.Diff(want, health()); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
}
