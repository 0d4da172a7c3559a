package ctl

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery/lldp"
)

const (
	ibFixtureRoot = "../discovery/rdma/testdata/dgx-h100-ib"
	superPOD      = "../ib/testdata/superpod.txt"
	switchesPcap  = "../discovery/lldp/testdata/switches.pcap"
)

// sysfsValue reads one attribute of the fixture tree, as the probe would.
func sysfsValue(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ibFixtureRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestProbeOnFixtures(t *testing.T) {
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out, stderr, err := run(t, "probe", "-o", format, "--node-name", "dgx-001",
				"--probes", "rdma,ibnetdiscover,lldp,nvml",
				"--sysfs-root", ibFixtureRoot, "--ibnetdiscover-file", superPOD, "--lldp-pcap", switchesPcap)
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, stderr)
			}
			var r v1alpha1.NodeFabricReport
			// sigs.k8s.io/yaml reads JSON too.
			if err := yaml.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output is not a %s report: %v\n%s", format, err, out)
			}
			checkFixtureReport(t, &r)
		})
	}
}

func checkFixtureReport(t *testing.T, r *v1alpha1.NodeFabricReport) {
	t.Helper()
	if r.Name != "dgx-001" || r.Kind != "NodeFabricReport" || r.APIVersion != "fabricmap.io/v1alpha1" {
		t.Errorf("object = %s %s %q", r.APIVersion, r.Kind, r.Name)
	}
	// RDMA: the fixture's mlx5_0 as sysfs holds it.
	var mlx50 *v1alpha1.RDMADevice
	for i := range r.Spec.RDMADevices {
		if r.Spec.RDMADevices[i].Name == "mlx5_0" {
			mlx50 = &r.Spec.RDMADevices[i]
		}
	}
	if mlx50 == nil || len(mlx50.Ports) != 1 {
		t.Fatalf("mlx5_0 missing or without its port: %+v", r.Spec.RDMADevices)
	}
	wantGUID := "0x" + strings.ReplaceAll(sysfsValue(t, "class/infiniband/mlx5_0/node_guid"), ":", "")
	if mlx50.NodeGUID != wantGUID {
		t.Errorf("mlx5_0 node GUID = %s, want %s", mlx50.NodeGUID, wantGUID)
	}
	p := mlx50.Ports[0]
	if p.Rate != sysfsValue(t, "class/infiniband/mlx5_0/ports/1/rate") || p.LinkLayer != "InfiniBand" || p.State != "ACTIVE" {
		t.Errorf("mlx5_0 port 1 = %+v", p)
	}
	// ibnetdiscover: dgx-001 reaches the eight rail leaves of SU 1; LLDP: the capture's two live switches.
	bySource := map[v1alpha1.NeighborSource][]string{}
	for _, n := range r.Spec.Neighbors {
		bySource[n.Source] = append(bySource[n.Source], n.SystemName)
	}
	if ib := bySource[v1alpha1.SourceIBNetDiscover]; len(ib) != 8 || !strings.HasPrefix(ib[0], "ib-su1-leaf-r") {
		t.Errorf("ibnetdiscover neighbours = %v, want the 8 rail leaves of SU 1", ib)
	}
	if lldp := strings.Join(bySource[v1alpha1.SourceLLDP], ","); !strings.Contains(lldp, "leaf01") || !strings.Contains(lldp, "leaf02") {
		t.Errorf("lldp neighbours = %s, want leaf01 and leaf02", lldp)
	}
	states := map[string]v1alpha1.ProbeState{}
	for _, c := range r.Status.Probes {
		states[c.Name] = c.State
	}
	// No GPU driver on a test machine: NVML is not applicable, which is no failure.
	if states["rdma"] != v1alpha1.ProbeAvailable || states["ibnetdiscover"] != v1alpha1.ProbeAvailable ||
		states["nvml"] != v1alpha1.ProbeNotApplicable {
		t.Errorf("probe states = %v", states)
	}
}

func TestProbeRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown probe", []string{"probe", "--probes", "nope", "--node-name", "n"}, "nope"},
		{"unknown format", []string{"probe", "-o", "xml", "--node-name", "n"}, "xml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// `fabricmap probe` prints what the switch announces about the port a node's link reaches: its VLAN, maximum
// frame size and link aggregation, as report fields; a malformed LLDP-MED TLV is a warning in the lldp probe's
// status, naming the TLV.
func TestProbePrintsLLDPPortFields(t *testing.T) {
	frame, err := hex.DecodeString("0180c200000e" + "0c42a1aabbcc" + "88cc" + // Ethernet, LLDP
		"0207" + "04" + "0c42a1aabbcc" + // chassis ID, MAC
		"0405" + "05" + "73777031" + // port ID, ifName "swp1"
		"0602" + "0078" + // TTL 120 s
		"0a06" + "6c6561663031" + // system name "leaf01"
		"fe06" + "0080c2" + "01" + "0064" + // 802.1 port VLAN ID 100
		"fe06" + "00120f" + "04" + "2400" + // 802.3 maximum frame size 9216
		"fe09" + "00120f" + "03" + "03" + "000186a1" + // 802.3 link aggregation: capable, enabled, aggregate 100001
		"fe07" + "0012bb" + "02" + "0180c8" + // LLDP-MED network policy, a byte short
		"0000")
	if err != nil {
		t.Fatal(err)
	}
	pcap := filepath.Join(t.TempDir(), "port.pcap")
	var buf bytes.Buffer
	if err := lldp.WritePcap(&buf, []lldp.CapturedFrame{{Timestamp: time.Unix(1_800_000_000, 0), Data: frame}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pcap, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "probe", "--probes", "lldp", "--lldp-pcap", pcap, "--node-name", "gpu-07")
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	for _, line := range []string{"portVLANID: 100", "maxFrameSize: 9216", "linkAggregation:", "portID: 100001"} {
		if !strings.Contains(out, line) {
			t.Errorf("the printed report lacks %q:\n%s", line, out)
		}
	}
	var r v1alpha1.NodeFabricReport
	if err := yaml.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := []v1alpha1.LinkNeighbor{{Source: v1alpha1.SourceLLDP, Interface: "pcap", ChassisID: "0c:42:a1:aa:bb:cc",
		ChassisIDSubtype: "mac", PortID: "swp1", PortIDSubtype: "ifName", SystemName: "leaf01", PortVLANID: 100,
		MaxFrameSize: 9216, LinkAggregation: &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 100001}}}
	if diff := cmp.Diff(want, r.Spec.Neighbors); diff != "" {
		t.Errorf("neighbours (-want +got):\n%s", diff)
	}
	const warning = "Organisation Specific TLV at offset 69: LLDP-MED Network Policy: Invalid Org Specific TLV 2 length 3 (wanted minimum 4); ignored"
	if len(r.Status.Probes) != 1 || !strings.Contains(r.Status.Probes[0].Message, warning) {
		t.Errorf("the lldp probe's status does not warn %q: %+v", warning, r.Status.Probes)
	}
}
