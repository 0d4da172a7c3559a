package rdma

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
)

// TestScanDamagedTrees removes or spoils files of a fixture copy and checks that each problem is a warning
// naming the file, and that everything else is still reported.
func TestScanDamagedTrees(t *testing.T) {
	type ctx struct {
		t    *testing.T
		root string
	}
	rm := func(c ctx, rel string) {
		if err := os.RemoveAll(filepath.Join(c.root, rel)); err != nil {
			c.t.Fatal(err)
		}
	}
	write := func(c ctx, rel, content string) {
		rdmatest.Replace(c.t, filepath.Join(c.root, rel), content)
	}
	relink := func(c ctx, rel, target string) {
		rm(c, rel)
		if err := os.Symlink(target, filepath.Join(c.root, rel)); err != nil {
			c.t.Fatal(err)
		}
	}
	dev := func(rep Report, name string) *Device {
		for i := range rep.Devices {
			if rep.Devices[i].Name == name {
				return &rep.Devices[i]
			}
		}
		return nil
	}

	cases := []struct {
		name    string
		fixture string
		damage  func(ctx)
		// warnings are file paths (relative to the root) and texts each warning must contain, in order.
		warnings [][2]string
		devices  int
		check    func(t *testing.T, rep Report)
	}{{
		name: "missing rate", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { rm(c, "class/infiniband/mlx5_3/ports/1/rate") },
		warnings: [][2]string{{"class/infiniband/mlx5_3/ports/1/rate", "no such file or directory"}},
		devices:  9,
		check: func(t *testing.T, rep Report) {
			p := dev(rep, "mlx5_3").Ports[0]
			if p.Rate != "" || p.State != "ACTIVE" || p.PhysState != "LinkUp" || p.LID != 0x7c || p.GUID != 0x946dae0300f82d8c {
				t.Errorf("mlx5_3 port: %+v", p)
			}
		},
	}, {
		name: "missing numa_node and node_guid", fixture: "dgx-h100-ib",
		damage: func(c ctx) {
			rm(c, "class/infiniband/mlx5_2/device/numa_node")
			rm(c, "class/infiniband/mlx5_2/node_guid")
		},
		warnings: [][2]string{
			{"class/infiniband/mlx5_2/node_guid", "cannot read"},
			{"class/infiniband/mlx5_2/device/numa_node", "cannot read"},
		},
		devices: 9,
		check: func(t *testing.T, rep Report) {
			d := dev(rep, "mlx5_2")
			if d.NUMANode != -1 || d.NodeGUID != 0 || d.SysImageGUID != 0x946dae0300f80c68 ||
				d.PCIAddress != "0000:4f:00.0" || d.NearestGPU.PCIAddress != "0000:52:00.0" {
				t.Errorf("mlx5_2: %+v", d)
			}
		},
	}, {
		name: "garbage values", fixture: "dgx-h100-ib",
		damage: func(c ctx) {
			p := "class/infiniband/mlx5_1/"
			write(c, p+"node_guid", "12:34")
			write(c, p+"device/numa_node", "x")
			write(c, p+"ports/1/state", "banana")
			write(c, p+"ports/1/phys_state", "5 LinkUp")
			write(c, p+"ports/1/rate", "fast")
			write(c, p+"ports/1/lid", "0xZZ")
			write(c, p+"ports/1/gids/0", "not-a-gid")
		},
		warnings: [][2]string{
			{"class/infiniband/mlx5_1/node_guid", `unparseable value "12:34"`},
			{"class/infiniband/mlx5_1/device/numa_node", `unparseable value "x"`},
			{"class/infiniband/mlx5_1/ports/1/state", `unparseable value "banana"`},
			{"class/infiniband/mlx5_1/ports/1/phys_state", `unparseable value "5 LinkUp"`},
			{"class/infiniband/mlx5_1/ports/1/rate", `unparseable value "fast"`},
			{"class/infiniband/mlx5_1/ports/1/lid", `unparseable value "0xZZ"`},
			{"class/infiniband/mlx5_1/ports/1/gids/0", `unparseable value "not-a-gid"`},
		},
		devices: 9,
		check: func(t *testing.T, rep Report) {
			d := dev(rep, "mlx5_1")
			p := d.Ports[0]
			if d.NodeGUID != 0 || d.NUMANode != -1 || p.State != "" || p.PhysState != "" || p.Rate != "" ||
				p.LID != 0 || p.GUID != 0 || len(p.GIDs) != 0 {
				t.Errorf("mlx5_1 kept a garbage value: %+v", d)
			}
			if p.SMLID != 1 || p.LinkLayer != "InfiniBand" || p.NetDev != "ibp64s0" || d.PCIAddress != "0000:40:00.0" {
				t.Errorf("mlx5_1 lost a good value: %+v", d)
			}
		},
	}, {
		name: "dangling device entry", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { relink(c, "class/infiniband/mlx5_4", "../../devices/pci0000:97/gone/infiniband/mlx5_4") },
		warnings: [][2]string{{"class/infiniband/mlx5_4", "device skipped"}},
		devices:  8,
		check: func(t *testing.T, rep Report) {
			if dev(rep, "mlx5_4") != nil || dev(rep, "mlx5_5") == nil {
				t.Errorf("devices: %d", len(rep.Devices))
			}
		},
	}, {
		name: "device entry is a file", fixture: "dgx-h100-ib",
		damage: func(c ctx) {
			rm(c, "class/infiniband/mlx5_0")
			write(c, "class/infiniband/mlx5_0", "?")
		},
		warnings: [][2]string{{"class/infiniband/mlx5_0", "not a directory; device skipped"}},
		devices:  8,
	}, {
		name: "no ports directory", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { rm(c, "class/infiniband/mlx5_6/ports") },
		warnings: [][2]string{{"class/infiniband/mlx5_6/ports", "cannot read"}},
		devices:  9,
		check: func(t *testing.T, rep Report) {
			if d := dev(rep, "mlx5_6"); len(d.Ports) != 0 || d.PCIAddress != "0000:ce:00.0" || d.NodeGUID == 0 {
				t.Errorf("mlx5_6: %+v", d)
			}
		},
	}, {
		name: "no PCI device link", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { rm(c, "class/infiniband/mlx5_7/device") },
		warnings: [][2]string{{"class/infiniband/mlx5_7/device", "PCI address and nearest GPU unknown"}},
		devices:  9,
		check: func(t *testing.T, rep Report) {
			d := dev(rep, "mlx5_7")
			if d.PCIAddress != "" || d.NUMANode != -1 || d.NearestGPU != nil || d.Ports[0].LID != 0xc8 {
				t.Errorf("mlx5_7: %+v", d)
			}
		},
	}, {
		name: "no bus/pci/devices", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { rm(c, "bus") },
		warnings: [][2]string{{"bus/pci/devices", "nearest GPUs unknown"}},
		devices:  9,
		check: func(t *testing.T, rep Report) {
			for _, d := range rep.Devices {
				if d.NearestGPU != nil || d.PCIAddress == "" {
					t.Errorf("%s: nearest %+v, PCI %q", d.Name, d.NearestGPU, d.PCIAddress)
				}
			}
		},
	}, {
		name: "GPU without class file", fixture: "dgx-h100-ib",
		damage:   func(c ctx) { rm(c, "bus/pci/devices/0000:43:00.0/class") },
		warnings: [][2]string{{"bus/pci/devices/0000:43:00.0/class", "cannot read"}},
		devices:  9,
		check: func(t *testing.T, rep Report) {
			if g := dev(rep, "mlx5_1").NearestGPU; g != nil {
				t.Errorf("mlx5_1: nearest %+v, want none", g)
			}
		},
	}, {
		name: "RoCE without gid_attrs/ndevs", fixture: "roce",
		damage: func(c ctx) { rm(c, "class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs") },
		check: func(t *testing.T, rep Report) {
			if p := dev(rep, "mlx5_1").Ports[0]; p.NetDev != "ens1f1np1" || p.GIDs[0].NetDev != "" {
				t.Errorf("mlx5_1 port: %+v", p)
			}
		},
		devices: 5,
	}, {
		name: "RoCE GID without type", fixture: "roce",
		damage:   func(c ctx) { rm(c, "class/infiniband/mlx5_0/ports/1/gid_attrs/types/3") },
		warnings: [][2]string{{"class/infiniband/mlx5_0/ports/1/gid_attrs/types/3", "cannot read"}},
		devices:  5,
		check: func(t *testing.T, rep Report) {
			got, _ := ToAPI(rep.Devices, nil)
			// The untyped GID is kept: better one GID too many than an IPv4 GID lost.
			if g := got[0].Ports[0].GIDs; len(g) != 3 || g[1] != "0000:0000:0000:0000:0000:ffff:0a0a:0115" {
				t.Errorf("mlx5_0 GIDs %q", g)
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := buildFixture(t, tc.fixture)
			tc.damage(ctx{t, root})
			rep, err := Scan(context.Background(), root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Devices) != tc.devices {
				t.Errorf("%d devices, want %d", len(rep.Devices), tc.devices)
			}
			if len(rep.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(rep.Warnings, "\n"), len(tc.warnings))
			}
			for i, w := range tc.warnings {
				path := filepath.Join(root, w[0])
				if got := rep.Warnings[i]; !strings.Contains(got, path) || !strings.Contains(got, w[1]) {
					t.Errorf("warning %d = %q, want it to name %s and say %q", i, got, path, w[1])
				}
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
		})
	}
}

// classEntries lists the names in a fixture's class/infiniband.
func classEntries(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "class", "infiniband"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

func TestScanEmptyClassDirIsNotApplicable(t *testing.T) {
	root := buildFixture(t, "roce")
	for _, n := range classEntries(t, root) {
		if err := os.Remove(filepath.Join(root, "class", "infiniband", n)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Scan(context.Background(), root, Options{})
	if err != nil || rep.NotApplicable != "no RDMA devices under "+filepath.Join(root, "class", "infiniband") {
		t.Errorf("got %+v, %v", rep, err)
	}
}

func TestScanFailsWhenNoDeviceIsReadable(t *testing.T) {
	root := buildFixture(t, "roce")
	for _, n := range classEntries(t, root) {
		p := filepath.Join(root, "class", "infiniband", n)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../devices/gone/"+n, p); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Scan(context.Background(), root, Options{})
	if err == nil || !strings.Contains(err.Error(), "none of the 5 entries of "+filepath.Join(root, "class", "infiniband")) ||
		!strings.Contains(err.Error(), filepath.Join(root, "class", "infiniband", "mlx5_2")) {
		t.Errorf("error %v", err)
	}
}

func TestScanFailsWhenClassDirIsNotADirectory(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "class"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "class", "infiniband"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(context.Background(), root, Options{}); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(root, "class", "infiniband")) {
		t.Errorf("error %v", err)
	}
}

func TestScanStopsWithContext(t *testing.T) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(c, fixtureRoot("roce"), Options{}); err != context.Canceled {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
