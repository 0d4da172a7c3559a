package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testenv"
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
