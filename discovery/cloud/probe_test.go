package cloud_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/cloud"
	"github.com/fabricmap/fabricmap/discovery/cloud/cloudtest"
)

// IDs as the providers give them.
const (
	ec2ID      = "i-0abcd1234efgh5678"
	gceID      = "4581729377290144283"
	gceZone    = "projects/123456789012/zones/europe-west1-b"
	a3Machine  = "projects/123456789012/machineTypes/a3-ultragpu-8g"
	a4xMachine = "projects/123456789012/machineTypes/a4x-highgpu-4g"
	gceTopo    = `{"cluster":"europe-west1-cluster-jfhb","block":"3e3056e23cf91a5cb4a8621b6a52c100",` +
		`"subBlock":"1fc18636cbd4abd623553784ca2c174e","host":"2326279b5ecdfc545fd5e39167698168"}`
	ociID     = "ocid1.instance.oc1.phx.anyhqljtexample0instance"
	ociAD     = "Uocm:PHX-AD-1"
	ociIsland = "ocid1.computehpcisland.oc1.phx.anyhqljtexample0island"
	ociBlock  = "ocid1.computenetworkblock.oc1.phx.anyhqljtexample0network"
	ociLocal  = "ocid1.computelocalblock.oc1.phx.anyhqljtexample0local"
	ociFabric = "ocid1.computegpumemoryfabric.oc1.phx.anyhqljtexample0fabric"
	ociTopo   = `{"customerHPCIslandId":"` + ociIsland + `","customerNetworkBlock":"` + ociBlock +
		`","customerLocalBlock":"` + ociLocal + `","customerGpuMemoryFabric":"` + ociFabric +
		`","customerHostId":"ocid1.computebaremetalhost.oc1.phx.anyhqljtexample0host"}`
)

var (
	awsRequests = []string{"PUT /latest/api/token", "GET /latest/meta-data/instance-id", "GET /latest/meta-data/placement/availability-zone"}
	gcpRequests = []string{"GET /computeMetadata/v1/instance/id", "GET /computeMetadata/v1/instance/zone",
		"GET /computeMetadata/v1/instance/attributes/physical_host_topology"}
	ociRequests = []string{"GET /opc/v2/instance/id", "GET /opc/v2/instance/availabilityDomain", "GET /opc/v2/host/rdmaTopologyData"}
)

// Each provider's answers become the report's cloud section; a node DMI names no cloud is not applicable
// without a request, unless the mode asks anyway.
func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dmi   map[string]string
		mode  string
		serve func(testing.TB) *cloudtest.Server
		want  discovery.Result
		// wantRequests are the requests the stand-in gets, in order.
		wantRequests []string
	}{{
		name: "aws: IDs through IMDSv2's token, no topology",
		dmi:  cloudtest.DMIAWS,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewAWS(t, cloudtest.AWS{InstanceID: ec2ID, AvailabilityZone: "us-east-1a"})
		},
		want:         discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudAWS, InstanceID: ec2ID, Zone: "us-east-1a"}},
		wantRequests: awsRequests,
	}, {
		name: "gcp: an A3 Ultra's physical host topology gives three layers and no NVLink domain",
		dmi:  cloudtest.DMIGCP,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewGCP(t, cloudtest.GCP{ID: gceID, Zone: gceZone, MachineType: a3Machine, PhysicalHostTopology: gceTopo})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: gceID, Zone: "europe-west1-b",
			Layers: []string{"europe-west1-cluster-jfhb", "3e3056e23cf91a5cb4a8621b6a52c100", "1fc18636cbd4abd623553784ca2c174e"}}},
		wantRequests: append(gcpRequests, "GET /computeMetadata/v1/instance/machine-type"),
	}, {
		name: "gcp: an A4X's sub-block is its NVLink domain",
		dmi:  cloudtest.DMIGCP,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewGCP(t, cloudtest.GCP{ID: gceID, Zone: gceZone, MachineType: a4xMachine, PhysicalHostTopology: gceTopo})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: gceID, Zone: "europe-west1-b",
			Layers:       []string{"europe-west1-cluster-jfhb", "3e3056e23cf91a5cb4a8621b6a52c100", "1fc18636cbd4abd623553784ca2c174e"},
			NVLinkDomain: "1fc18636cbd4abd623553784ca2c174e"}},
		wantRequests: append(gcpRequests, "GET /computeMetadata/v1/instance/machine-type"),
	}, {
		name: "gcp: without physical_host_topology, IDs only",
		dmi:  cloudtest.DMIGCP,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewGCP(t, cloudtest.GCP{ID: gceID, Zone: gceZone, MachineType: a4xMachine})
		},
		want:         discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: gceID, Zone: "europe-west1-b"}},
		wantRequests: gcpRequests,
	}, {
		name: "oci: rdmaTopologyData gives three layers and the GPU memory fabric",
		dmi:  cloudtest.DMIOCI,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID, AvailabilityDomain: ociAD, RDMATopologyData: ociTopo})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID, Zone: ociAD,
			Layers: []string{ociIsland, ociBlock, ociLocal}, NVLinkDomain: ociFabric}},
		wantRequests: ociRequests,
	}, {
		name: "oci: rdmaTopologyData absent (404), IDs only",
		dmi:  cloudtest.DMIOCI,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID, AvailabilityDomain: ociAD})
		},
		want:         discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID, Zone: ociAD}},
		wantRequests: ociRequests,
	}, {
		name: "oci: a topology without a network block ends the layers above it, and says so",
		dmi:  cloudtest.DMIOCI,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID, AvailabilityDomain: ociAD,
				RDMATopologyData: `{"customerHPCIslandId":"` + ociIsland + `","customerLocalBlock":"` + ociLocal + `"}`})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID, Zone: ociAD,
			Layers: []string{ociIsland}},
			Warnings: []string{"oci: the topology gives customerLocalBlock but no customerNetworkBlock: the layers end above it"}},
		wantRequests: ociRequests,
	}, {
		name: "oci: malformed rdmaTopologyData is a warning, the IDs stay",
		dmi:  cloudtest.DMIOCI,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID, AvailabilityDomain: ociAD, RDMATopologyData: `{"customerHPCIslandId":`})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID, Zone: ociAD},
			Warnings: []string{"oci: host/rdmaTopologyData: unexpected end of JSON input"}},
		wantRequests: ociRequests,
	}, {
		name:  "off a cloud: not applicable, without any request",
		dmi:   cloudtest.DMIOnPrem,
		serve: func(t testing.TB) *cloudtest.Server { return cloudtest.NewAWS(t, cloudtest.AWS{InstanceID: ec2ID}) },
		want: discovery.Result{NotApplicable: `not on a known cloud: DMI under ROOT/class/dmi/id names no known cloud ` +
			`(sys_vendor "Dell Inc.", product_name "PowerEdge XE9680", board_vendor "Dell Inc.")`},
	}, {
		name:  "no DMI at all: not applicable, without any request",
		serve: func(t testing.TB) *cloudtest.Server { return cloudtest.NewAWS(t, cloudtest.AWS{InstanceID: ec2ID}) },
		want:  discovery.Result{NotApplicable: "not on a known cloud: no DMI identity under ROOT/class/dmi/id"},
	}, {
		name:  "off: not applicable on a cloud too, without any request",
		dmi:   cloudtest.DMIAWS,
		mode:  cloud.ModeOff,
		serve: func(t testing.TB) *cloudtest.Server { return cloudtest.NewAWS(t, cloudtest.AWS{InstanceID: ec2ID}) },
		want:  discovery.Result{NotApplicable: "instance metadata is off (--cloud-metadata=off)"},
	}, {
		name: "on: DMI names no cloud, so each provider is asked in turn until one answers",
		dmi:  cloudtest.DMIOnPrem,
		mode: cloud.ModeOn,
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewGCP(t, cloudtest.GCP{ID: gceID, Zone: gceZone})
		},
		want:         discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: gceID, Zone: "europe-west1-b"}},
		wantRequests: append([]string{"PUT /latest/api/token"}, gcpRequests...),
	}, {
		name: "a provider named: asked without looking at DMI",
		mode: "oci",
		serve: func(t testing.TB) *cloudtest.Server {
			return cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID})
		},
		want: discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID},
			Warnings: []string{"oci: instance/availabilityDomain: not found (HTTP 404)"}},
		wantRequests: ociRequests,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.serve(t)
			root := cloudtest.SysfsWithDMI(t, tc.dmi)
			p, err := cloud.New(cloud.Options{SysfsRoot: root, Mode: tc.mode, Endpoint: srv.URL, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(context.Background())
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			res.NotApplicable = replaceRoot(res.NotApplicable, root)
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRequests, srv.Requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
