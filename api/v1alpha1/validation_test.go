package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Values as the agent writes them (discovery/rdma): a GUID as "0x" and 16 hex digits, a GID in the kernel's full
// form.
const (
	guid = "0x946dae0300f81a20"                      // 18 characters
	gid  = "fe80:0000:0000:0000:946d:ae03:00f8:1a20" // 39 characters
)

// The CRD, as the real API server enforces it, takes the longest GUIDs and GIDs the agent writes and refuses
// longer ones, naming the field.
func TestReportStringBounds(t *testing.T) {
	testenv.Require(t)
	for _, tc := range []struct {
		name string
		edit func(d *v1alpha1.RDMADevice)
		// wantField is the field the refusal names; empty means the report is accepted.
		wantField string
	}{
		{name: "the agent's own values fit", edit: func(*v1alpha1.RDMADevice) {}},
		{name: "a node GUID with one character too many", edit: func(d *v1alpha1.RDMADevice) { d.NodeGUID = guid + "0" },
			wantField: "spec.rdmaDevices[0].nodeGUID"},
		{name: "a system image GUID with one character too many", edit: func(d *v1alpha1.RDMADevice) { d.SystemImageGUID = guid + "0" },
			wantField: "spec.rdmaDevices[0].systemImageGUID"},
		{name: "a port GUID with one character too many", edit: func(d *v1alpha1.RDMADevice) { d.Ports[0].GUID = guid + "0" },
			wantField: "spec.rdmaDevices[0].ports[0].guid"},
		{name: "the second GID of a port with one character too many", edit: func(d *v1alpha1.RDMADevice) { d.Ports[0].GIDs[1] = gid + "0" },
			wantField: "spec.rdmaDevices[0].ports[0].gids[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := v1alpha1.RDMADevice{Name: "mlx5_0", NodeGUID: guid, SystemImageGUID: guid,
				Ports: []v1alpha1.RDMAPort{{Number: 1, GUID: guid, GIDs: []string{gid, gid}}}}
			tc.edit(&dev)
			r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{GenerateName: "bounds-"},
				Spec: v1alpha1.NodeFabricReportSpec{RDMADevices: []v1alpha1.RDMADevice{dev}}}
			err := testenv.Shared.Client.Create(context.Background(), r)
			switch {
			case tc.wantField == "" && err != nil:
				t.Fatalf("a report with the agent's own values was refused: %v", err)
			case tc.wantField == "":
				return
			case !apierrors.IsInvalid(err):
				t.Fatalf("an over-long value was not refused as invalid: %v", err)
			case !strings.Contains(err.Error(), tc.wantField+": Too long"):
				t.Errorf("the refusal does not name %s as too long: %v", tc.wantField, err)
			}
		})
	}
}

// The CRD takes the port fields LLDP gives a neighbour up to their protocol's bounds (a 12-bit VLAN ID less the
// reserved 4095, a 16-bit frame size, a 32-bit aggregate ID) and refuses values past them, naming the field.
func TestNeighborPortFieldBounds(t *testing.T) {
	testenv.Require(t)
	for _, tc := range []struct {
		name string
		edit func(n *v1alpha1.LinkNeighbor)
		// wantField is the field the refusal names; empty means the report is accepted.
		wantField string
	}{
		{name: "none announced", edit: func(*v1alpha1.LinkNeighbor) {}},
		{name: "the largest values", edit: func(n *v1alpha1.LinkNeighbor) {
			n.PortVLANID, n.MaxFrameSize = 4094, 65535
			n.LinkAggregation = &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 4294967295}
		}},
		{name: "a capable port not aggregated", edit: func(n *v1alpha1.LinkNeighbor) {
			n.LinkAggregation = &v1alpha1.LinkAggregation{Capable: true}
		}},
		{name: "the reserved VLAN ID 4095", edit: func(n *v1alpha1.LinkNeighbor) { n.PortVLANID = 4095 },
			wantField: "spec.neighbors[0].portVLANID"},
		{name: "a negative VLAN ID", edit: func(n *v1alpha1.LinkNeighbor) { n.PortVLANID = -1 },
			wantField: "spec.neighbors[0].portVLANID"},
		{name: "a frame size past 16 bits", edit: func(n *v1alpha1.LinkNeighbor) { n.MaxFrameSize = 65536 },
			wantField: "spec.neighbors[0].maxFrameSize"},
		{name: "an aggregate ID past 32 bits", edit: func(n *v1alpha1.LinkNeighbor) {
			n.LinkAggregation = &v1alpha1.LinkAggregation{Enabled: true, PortID: 4294967296}
		}, wantField: "spec.neighbors[0].linkAggregation.portID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := v1alpha1.LinkNeighbor{Source: v1alpha1.SourceLLDP, Interface: "ens1f0np0", ChassisID: "0c:42:a1:aa:bb:cc",
				ChassisIDSubtype: "mac", PortID: "Ethernet1/1", PortIDSubtype: "ifName"}
			tc.edit(&n)
			r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{GenerateName: "port-bounds-"},
				Spec: v1alpha1.NodeFabricReportSpec{Neighbors: []v1alpha1.LinkNeighbor{n}}}
			err := testenv.Shared.Client.Create(context.Background(), r)
			switch {
			case tc.wantField == "" && err != nil:
				t.Fatalf("a report within the bounds was refused: %v", err)
			case tc.wantField == "":
				return
			case !apierrors.IsInvalid(err):
				t.Fatalf("a value past the bounds was not refused as invalid: %v", err)
			case !strings.Contains(err.Error(), tc.wantField+": Invalid value"):
				t.Errorf("the refusal does not name %s: %v", tc.wantField, err)
			}
		})
	}
}
