package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// crdFile is the generated CRD (make generate).
const crdFile = "../../charts/fabricmap/files/crds/fabricmap.io_nodefabricreports.yaml"

// TestLimitsMatchTheCRD reads the generated CRD's bounds at each path the limits name: the constants the code
// caps reports with are the markers the API server enforces.
func TestLimitsMatchTheCRD(t *testing.T) {
	b, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatalf("reading %s: %v", crdFile, err)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) != 1 {
		t.Fatalf("%s has %d versions, want 1", crdFile, len(versions))
	}
	schema := dig(versions[0], "schema", "openAPIV3Schema")
	// bound is the schema's key at path, each step a property, through the items of a list on the way.
	bound := func(key string, path ...string) any {
		at := schema
		for i, p := range path {
			at = dig(at, "properties", p)
			if items := dig(at, "items"); items != nil && i < len(path)-1 {
				at = items
			}
		}
		return dig(at, key)
	}
	got := map[string]any{
		"MaxGPUs":                        bound("maxItems", "spec", "gpus"),
		"MaxRDMADevices":                 bound("maxItems", "spec", "rdmaDevices"),
		"MaxPortsPerDevice":              bound("maxItems", "spec", "rdmaDevices", "ports"),
		"MaxGIDsPerPort":                 bound("maxItems", "spec", "rdmaDevices", "ports", "gids"),
		"MaxCharDevicesPerDevice":        bound("maxItems", "spec", "rdmaDevices", "charDevices"),
		"MaxNeighbors":                   bound("maxItems", "spec", "neighbors"),
		"MaxProbes":                      bound("maxItems", "status", "probes"),
		"MaxSwitchIDLength, chassisID":   bound("maxLength", "spec", "neighbors", "chassisID"),
		"MaxSwitchIDLength, portID":      bound("maxLength", "spec", "neighbors", "portID"),
		"MaxSwitchIDLength, systemName":  bound("maxLength", "spec", "neighbors", "systemName"),
		"MaxCloudLayers":                 bound("maxItems", "spec", "cloud", "layers"),
		"MaxCloudIDLength, instanceID":   bound("maxLength", "spec", "cloud", "instanceID"),
		"MaxCloudIDLength, zone":         bound("maxLength", "spec", "cloud", "zone"),
		"MaxCloudIDLength, layers[]":     dig(bound("items", "spec", "cloud", "layers"), "maxLength"),
		"MaxCloudIDLength, nvlinkDomain": bound("maxLength", "spec", "cloud", "nvlinkDomain"),
	}
	want := map[string]any{
		"MaxGPUs":                        float64(v1alpha1.MaxGPUs),
		"MaxRDMADevices":                 float64(v1alpha1.MaxRDMADevices),
		"MaxPortsPerDevice":              float64(v1alpha1.MaxPortsPerDevice),
		"MaxGIDsPerPort":                 float64(v1alpha1.MaxGIDsPerPort),
		"MaxCharDevicesPerDevice":        float64(v1alpha1.MaxCharDevicesPerDevice),
		"MaxNeighbors":                   float64(v1alpha1.MaxNeighbors),
		"MaxProbes":                      float64(v1alpha1.MaxProbes),
		"MaxSwitchIDLength, chassisID":   float64(v1alpha1.MaxSwitchIDLength),
		"MaxSwitchIDLength, portID":      float64(v1alpha1.MaxSwitchIDLength),
		"MaxSwitchIDLength, systemName":  float64(v1alpha1.MaxSwitchIDLength),
		"MaxCloudLayers":                 float64(v1alpha1.MaxCloudLayers),
		"MaxCloudIDLength, instanceID":   float64(v1alpha1.MaxCloudIDLength),
		"MaxCloudIDLength, zone":         float64(v1alpha1.MaxCloudIDLength),
		"MaxCloudIDLength, layers[]":     float64(v1alpha1.MaxCloudIDLength),
		"MaxCloudIDLength, nvlinkDomain": float64(v1alpha1.MaxCloudIDLength),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the CRD's bounds differ from the limits (-limits +CRD):\n%s", diff)
	}
}

// dig walks a decoded YAML document by map keys; nil when a key is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// The API server takes a report with each list at its limit and refuses one with a list one item longer,
// naming the list: what one report can say is bounded before the aggregator reads it.
func TestReportListLimits(t *testing.T) {
	testenv.Require(t)
	device := func(i int) v1alpha1.RDMADevice {
		return v1alpha1.RDMADevice{Name: fmt.Sprintf("mlx5_%d", i), Ports: []v1alpha1.RDMAPort{{Number: 1}}}
	}
	for _, tc := range []struct {
		name string
		// fill gives the report n items of the list under test.
		fill func(s *v1alpha1.NodeFabricReportSpec, n int)
		max  int
		// field is the list the refusal names.
		field string
	}{{
		name: "GPUs", max: v1alpha1.MaxGPUs, field: "spec.gpus",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			for i := range n {
				s.GPUs = append(s.GPUs, v1alpha1.GPU{Index: int32(i), UUID: fmt.Sprintf("GPU-%d", i)})
			}
		},
	}, {
		name: "RDMA devices", max: v1alpha1.MaxRDMADevices, field: "spec.rdmaDevices",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			for i := range n {
				s.RDMADevices = append(s.RDMADevices, device(i))
			}
		},
	}, {
		name: "ports of one device", max: v1alpha1.MaxPortsPerDevice, field: "spec.rdmaDevices[0].ports",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			d := v1alpha1.RDMADevice{Name: "mlx5_0"}
			for i := range n {
				d.Ports = append(d.Ports, v1alpha1.RDMAPort{Number: int32(i + 1)})
			}
			s.RDMADevices = []v1alpha1.RDMADevice{d}
		},
	}, {
		name: "GIDs of one port", max: v1alpha1.MaxGIDsPerPort, field: "spec.rdmaDevices[0].ports[0].gids",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			d := device(0)
			for i := range n {
				d.Ports[0].GIDs = append(d.Ports[0].GIDs, fmt.Sprintf("fe80:0000:0000:0000:0000:0000:0000:%04x", i))
			}
			s.RDMADevices = []v1alpha1.RDMADevice{d}
		},
	}, {
		name: "character devices of one device", max: v1alpha1.MaxCharDevicesPerDevice, field: "spec.rdmaDevices[0].charDevices",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			d := device(0)
			for i := range n {
				d.CharDevices = append(d.CharDevices, fmt.Sprintf("uverbs%d", i))
			}
			s.RDMADevices = []v1alpha1.RDMADevice{d}
		},
	}, {
		name: "cloud layers", max: v1alpha1.MaxCloudLayers, field: "spec.cloud.layers",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			s.Cloud = &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "ocid1.instance.oc1.phx.example"}
			for i := range n {
				s.Cloud.Layers = append(s.Cloud.Layers, fmt.Sprintf("layer-%d", i))
			}
		},
	}, {
		name: "neighbours", max: v1alpha1.MaxNeighbors, field: "spec.neighbors",
		fill: func(s *v1alpha1.NodeFabricReportSpec, n int) {
			for i := range n {
				s.Neighbors = append(s.Neighbors, v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover,
					Interface: fmt.Sprintf("mlx5_%d/1", i), ChassisID: fmt.Sprintf("0x%016x", i), ChassisIDSubtype: "guid"})
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{tc.max, tc.max + 1} {
				r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{GenerateName: "limits-"}}
				tc.fill(&r.Spec, n)
				err := testenv.Shared.Client.Create(context.Background(), r)
				if err == nil {
					t.Cleanup(func() { _ = testenv.Shared.Client.Delete(context.Background(), r) })
				}
				if n == tc.max {
					if err != nil {
						t.Fatalf("a report with %d %s, the limit, was refused: %v", n, tc.name, err)
					}
					continue
				}
				want := fmt.Sprintf("%s: Too many: %d: must have at most %d items", tc.field, n, tc.max)
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
					t.Errorf("a report with %d %s: got %v, want it refused as invalid with %q", n, tc.name, err, want)
				}
			}
		})
	}
}

// The API server refuses a switch name one character past LLDP's bound, naming the field.
func TestSwitchNameLimit(t *testing.T) {
	testenv.Require(t)
	for _, n := range []int{v1alpha1.MaxSwitchIDLength, v1alpha1.MaxSwitchIDLength + 1} {
		r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{GenerateName: "limits-"},
			Spec: v1alpha1.NodeFabricReportSpec{Neighbors: []v1alpha1.LinkNeighbor{{Source: v1alpha1.SourceLLDP,
				Interface: "eth0", ChassisID: "0c:42:a1:aa:bb:cc", ChassisIDSubtype: "mac", SystemName: strings.Repeat("s", n)}}}}
		err := testenv.Shared.Client.Create(context.Background(), r)
		if err == nil {
			t.Cleanup(func() { _ = testenv.Shared.Client.Delete(context.Background(), r) })
		}
		switch {
		case n == v1alpha1.MaxSwitchIDLength && err != nil:
			t.Fatalf("a switch name of %d characters, the limit, was refused: %v", n, err)
		case n > v1alpha1.MaxSwitchIDLength && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.neighbors[0].systemName: Too long")):
			t.Errorf("a switch name of %d characters: got %v, want it refused as too long", n, err)
		}
	}
}

// The API server takes a cloud section with every string at MaxCloudIDLength and refuses one a character longer,
// an empty instance ID or layer, and a provider it does not know, naming the field.
func TestCloudSectionBounds(t *testing.T) {
	testenv.Require(t)
	fit := strings.Repeat("c", v1alpha1.MaxCloudIDLength)
	over := fit + "c"
	for _, tc := range []struct {
		name string
		edit func(c *v1alpha1.CloudInstance)
		// want is what the refusal says; empty means the report is accepted.
		want string
	}{
		{name: "every string at the limit", edit: func(*v1alpha1.CloudInstance) {}},
		{name: "an instance ID too long", edit: func(c *v1alpha1.CloudInstance) { c.InstanceID = over }, want: "spec.cloud.instanceID: Too long"},
		{name: "an empty instance ID", edit: func(c *v1alpha1.CloudInstance) { c.InstanceID = "" }, want: "spec.cloud.instanceID"},
		{name: "a zone too long", edit: func(c *v1alpha1.CloudInstance) { c.Zone = over }, want: "spec.cloud.zone: Too long"},
		{name: "a layer too long", edit: func(c *v1alpha1.CloudInstance) { c.Layers[1] = over }, want: "spec.cloud.layers[1]: Too long"},
		{name: "an empty layer", edit: func(c *v1alpha1.CloudInstance) { c.Layers[2] = "" }, want: "spec.cloud.layers[2]"},
		{name: "an NVLink domain too long", edit: func(c *v1alpha1.CloudInstance) { c.NVLinkDomain = over }, want: "spec.cloud.nvlinkDomain: Too long"},
		{name: "an unknown provider", edit: func(c *v1alpha1.CloudInstance) { c.Provider = "azure" }, want: `spec.cloud.provider: Unsupported value: "azure"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: fit, Zone: fit, Layers: []string{fit, fit, fit}, NVLinkDomain: fit}
			tc.edit(c)
			r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{GenerateName: "cloud-"}, Spec: v1alpha1.NodeFabricReportSpec{Cloud: c}}
			err := testenv.Shared.Client.Create(context.Background(), r)
			if err == nil {
				t.Cleanup(func() { _ = testenv.Shared.Client.Delete(context.Background(), r) })
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a cloud section within the bounds was refused: %v", err)
			case tc.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want it refused as invalid with %q", err, tc.want)
			}
		})
	}
}
