package ibnetdiscover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

func leafNeighbor(iface, port string) v1alpha1.LinkNeighbor {
	return v1alpha1.LinkNeighbor{
		Source: v1alpha1.SourceIBNetDiscover, Interface: iface,
		ChassisID: "b83fd20300a10002", ChassisIDSubtype: "guid", PortID: port, PortIDSubtype: "number",
		SystemName: "ib-leaf-01", SystemDescription: "MF0;ib-leaf-01:MQM9700/U1",
	}
}

// The registered probe takes its file and sweep interval from its own flags, the node from the shared
// settings.
func TestProbeRegistered(t *testing.T) {
	opts := discovery.Options{Config: discovery.Config{NodeName: "dgx-a01"}}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if got := fs.Lookup("ibnetdiscover-interval").DefValue; got != "30m0s" {
		t.Errorf("--ibnetdiscover-interval defaults to %s, want 30m0s", got)
	}
	if err := fs.Parse([]string{"--ibnetdiscover-file", "../../ib/testdata/small.txt", "--ibnetdiscover-interval", "1m"}); err != nil {
		t.Fatal(err)
	}
	probes, err := opts.Probes(ProbeName)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1 || probes[0].Name() != "ibnetdiscover" {
		t.Fatalf("probes = %v", probes)
	}
	if diff := cmp.Diff(Settings{File: "../../ib/testdata/small.txt", Interval: time.Minute}, probes[0].(*Probe).Settings); diff != "" {
		t.Errorf("the probe's settings (-want +got):\n%s", diff)
	}
	res, err := probes[0].Run(context.Background())
	if err != nil || len(res.Neighbors) != 2 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

func TestProbeNeighborsFromFile(t *testing.T) {
	for _, tc := range []struct {
		node     string
		want     []v1alpha1.LinkNeighbor
		warnings []string
		na       string
	}{
		{node: "dgx-a01", want: []v1alpha1.LinkNeighbor{leafNeighbor("mlx5_0/1", "1"), leafNeighbor("mlx5_1/1", "2")}},
		{node: "DGX-A02", want: []v1alpha1.LinkNeighbor{leafNeighbor("HCA-1/1", "3")}},
		// No device word in the description: the HCA is named by its GUID.
		{node: "node9", want: []v1alpha1.LinkNeighbor{leafNeighbor("0002c90300f00009/1", "4")}},
		{node: "dgx-a01.cluster.local", want: []v1alpha1.LinkNeighbor{leafNeighbor("mlx5_0/1", "1"), leafNeighbor("mlx5_1/1", "2")},
			warnings: []string{`node "dgx-a01.cluster.local" matched fabric host "dgx-a01" by short name`}},
		{node: "dgx-z99", na: `node "dgx-z99" has no HCA cabled to a switch in the fabric (3 hosts, 2 switches)`},
		// The aggregation node's description must not make "mellanox" a host.
		{node: "mellanox", na: `node "mellanox" has no HCA cabled to a switch in the fabric (3 hosts, 2 switches)`},
	} {
		t.Run(tc.node, func(t *testing.T) {
			res, err := New(discovery.Config{NodeName: tc.node}, Settings{File: "../../ib/testdata/small.txt"}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Neighbors); diff != "" {
				t.Errorf("Run(%s) neighbours (-want +got):\n%s", tc.node, diff)
			}
			if res.NotApplicable != tc.na {
				t.Errorf("Run(%s) NotApplicable = %q, want %q", tc.node, res.NotApplicable, tc.na)
			}
			if diff := cmp.Diff(tc.warnings, res.Warnings); diff != "" {
				t.Errorf("Run(%s) warnings (-want +got):\n%s", tc.node, diff)
			}
		})
	}
}

func TestProbeSuperPODHost(t *testing.T) {
	res, err := New(discovery.Config{NodeName: "dgx-021"}, Settings{File: superPODFixture}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range res.Neighbors {
		got = append(got, n.Interface+" "+n.SystemName+":"+n.PortID)
	}
	want := []string{ // sorted by device name; mlx5_9 (rail 6) is down
		"mlx5_0/1 ib-su2-leaf-r1:5", "mlx5_10/1 ib-su2-leaf-r7:5", "mlx5_11/1 ib-su2-leaf-r8:5", "mlx5_3/1 ib-su2-leaf-r2:5",
		"mlx5_4/1 ib-su2-leaf-r3:5", "mlx5_5/1 ib-su2-leaf-r4:5", "mlx5_6/1 ib-su2-leaf-r5:5",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("neighbours (-want +got):\n%s", diff)
	}
}

func TestProbeFileErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		node, file string
	}{
		"missing file": {node: "dgx-a01", file: "../../ib/testdata/does-not-exist.txt"},
		"garbage file": {node: "dgx-a01", file: "../../ib/testdata/garbage.txt"},
		"no node name": {file: "../../ib/testdata/small.txt"},
	} {
		t.Run(name, func(t *testing.T) {
			if res, err := New(discovery.Config{NodeName: tc.node}, Settings{File: tc.file}).Run(context.Background()); err == nil {
				t.Fatalf("Run = %+v, want an error", res)
			}
		})
	}
}

// fakeSysfs makes a sysfs tree with one RDMA device whose port 1 has the given link layer.
func fakeSysfs(t testing.TB, linkLayer string) string {
	t.Helper()
	root := t.TempDir()
	port := filepath.Join(root, "class", "infiniband", "mlx5_0", "ports", "1")
	if err := os.MkdirAll(port, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(port, "link_layer"), []byte(linkLayer+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestProbeRunsTool(t *testing.T) {
	fixture, err := filepath.Abs("../../ib/testdata/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	ok := fakeTool(t, "cat '"+fixture+"'")
	fails := fakeTool(t, "echo must not run >&2; exit 1")
	for _, tc := range []struct {
		name      string
		sysfs     string
		tool      string
		neighbors int
		na        string
		wantErr   bool
	}{
		{name: "InfiniBand node", sysfs: fakeSysfs(t, "InfiniBand"), tool: ok, neighbors: 2},
		{name: "RoCE-only node", sysfs: fakeSysfs(t, "Ethernet"), tool: fails, na: "no InfiniBand port under"},
		{name: "no RDMA device", sysfs: t.TempDir(), tool: fails, na: "no InfiniBand port under"},
		{name: "tool not installed", sysfs: fakeSysfs(t, "InfiniBand"), tool: filepath.Join(t.TempDir(), "ibnetdiscover"), na: "ibnetdiscover not available"},
		{name: "tool fails", sysfs: fakeSysfs(t, "InfiniBand"), tool: fails, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(discovery.Config{NodeName: "dgx-a01", SysfsRoot: tc.sysfs}, Settings{})
			p.Runner.Path = tc.tool
			res, err := p.Run(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if len(res.Neighbors) != tc.neighbors || !strings.Contains(res.NotApplicable, tc.na) || (tc.na == "") != (res.NotApplicable == "") {
				t.Errorf("Run = %+v; want %d neighbours, NotApplicable containing %q", res, tc.neighbors, tc.na)
			}
		})
	}
}

// The probe keeps, between runs, only the part of the fabric its node needs: its own HCAs and their cables,
// not every host's (see BenchmarkProbeFabric for what that saves).
func TestProbeKeepsOnlyItsNode(t *testing.T) {
	p := New(discovery.Config{NodeName: "dgx-021.cluster.local"}, Settings{File: superPODFixture})
	res, err := p.Run(context.Background())
	if err != nil || len(res.Neighbors) != 7 {
		t.Fatalf("Run = %d neighbours, %v; want dgx-021's 7", len(res.Neighbors), err)
	}
	f, _, err := p.file.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, ca := range f.CAs {
		hosts[ca.Host]++
	}
	if diff := cmp.Diff(map[string]int{"dgx-021": 7}, hosts); diff != "" {
		t.Errorf("kept CAs by host (-want +got):\n%s", diff)
	}
	if len(f.Links) != 7 || f.HostCount != 32 || len(f.Switches) != 24 {
		t.Errorf("%d links, %d hosts counted, %d switches; want 7, 32, 24", len(f.Links), f.HostCount, len(f.Switches))
	}
}

// superPODFixture is the capture of ib's SuperPOD-like fixture.
const superPODFixture = "../../ib/testdata/superpod.txt"

// TestProbeDirectorIsOneSwitch: a host on a director's line card reports the chassis (its system image GUID
// and name), with the port qualified by the card, as the capture and UFM sources name it.
func TestProbeDirectorIsOneSwitch(t *testing.T) {
	for node, port := range map[string]string{"gpu-01": "L01/U1/1", "gpu-03": "L02/U1/1"} {
		res, err := New(discovery.Config{NodeName: node}, Settings{File: "../../sources/ibfabric/testdata/director.txt"}).Run(context.Background())
		if err != nil || len(res.Neighbors) != 1 {
			t.Fatalf("%s: Run = %+v, %v", node, res, err)
		}
		n := res.Neighbors[0]
		got := [4]string{n.ChassisID, n.SystemName, n.PortID, n.PortIDSubtype}
		if want := [4]string{"98039b0300c0a100", "ib-dir-01", port, "local"}; got != want {
			t.Errorf("%s: neighbour (chassis, name, port, subtype) = %q, want %q", node, got, want)
		}
	}
}
