package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/cloud"
	"github.com/fabricmap/fabricmap/discovery/cloud/cloudtest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// An OCI host with its RDMA topology, as the cloud probe reports it.
var ociInstance = v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "ocid1.instance.oc1.phx.anyhqljtexample0instance",
	Zone: "Uocm:PHX-AD-1", Layers: []string{"ocid1.computehpcisland.oc1.phx.island", "ocid1.computenetworkblock.oc1.phx.block",
		"ocid1.computelocalblock.oc1.phx.local"}, NVLinkDomain: "ocid1.computegpumemoryfabric.oc1.phx.fabric"}

// The cloud probe's instance becomes the report's cloud section, within the CRD's limits; a probe that found
// no cloud, or failed without data, leaves the section out. The probe's own result is never changed.
func TestReportCloudSection(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	long := strings.Repeat("x", v1alpha1.MaxCloudIDLength+1)
	many := make([]string, v1alpha1.MaxCloudLayers+2)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	for _, tc := range []struct {
		name          string
		outcome       outcome
		want          *v1alpha1.CloudInstance
		wantState     v1alpha1.ProbeState
		wantTruncated bool
	}{{
		name:      "an instance with its topology",
		outcome:   outcome{name: cloud.Name, result: discovery.Result{Cloud: &ociInstance}},
		want:      &ociInstance,
		wantState: v1alpha1.ProbeAvailable,
	}, {
		name:      "off a cloud",
		outcome:   outcome{name: cloud.Name, result: discovery.Result{NotApplicable: "not on a known cloud: no DMI identity under /sys/class/dmi/id"}},
		wantState: v1alpha1.ProbeNotApplicable,
	}, {
		name:      "a failure without earlier data",
		outcome:   outcome{name: cloud.Name, err: context.DeadlineExceeded},
		wantState: v1alpha1.ProbeDegraded,
	}, {
		name: "more layers than the CRD takes keep the top ones",
		outcome: outcome{name: cloud.Name, result: discovery.Result{Cloud: &v1alpha1.CloudInstance{
			Provider: v1alpha1.CloudGCP, InstanceID: "1", Layers: many}}},
		want:          &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: "1", Layers: many[:v1alpha1.MaxCloudLayers]},
		wantState:     v1alpha1.ProbeAvailable,
		wantTruncated: true,
	}, {
		name: "over-long values are left out, and the layers end above one",
		outcome: outcome{name: cloud.Name, result: discovery.Result{Cloud: &v1alpha1.CloudInstance{
			Provider: v1alpha1.CloudGCP, InstanceID: "1", Zone: long, NVLinkDomain: long, Layers: []string{"c", long, "s"}}}},
		want:          &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: "1", Layers: []string{"c"}},
		wantState:     v1alpha1.ProbeAvailable,
		wantTruncated: true,
	}, {
		name: "an over-long instance ID drops the section",
		outcome: outcome{name: cloud.Name, result: discovery.Result{Cloud: &v1alpha1.CloudInstance{
			Provider: v1alpha1.CloudAWS, InstanceID: long}}},
		wantState:     v1alpha1.ProbeAvailable,
		wantTruncated: true,
	}, {
		name: "an unknown provider drops the section",
		outcome: outcome{name: cloud.Name, result: discovery.Result{Cloud: &v1alpha1.CloudInstance{
			Provider: "azure", InstanceID: "vm-1"}}},
		wantState:     v1alpha1.ProbeAvailable,
		wantTruncated: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.outcome.result.Cloud.DeepCopy()
			r := buildReport("n1", []outcome{tc.outcome}, nil, nil, now)
			if diff := cmp.Diff(tc.want, r.Spec.Cloud); diff != "" {
				t.Errorf("spec.cloud (-want +got):\n%s", diff)
			}
			if got := probeCondition(r, cloud.Name).State; got != tc.wantState {
				t.Errorf("condition %s, want %s", got, tc.wantState)
			}
			if r.Status.Truncated != tc.wantTruncated {
				t.Errorf("truncated = %v, want %v", r.Status.Truncated, tc.wantTruncated)
			}
			if diff := cmp.Diff(before, tc.outcome.result.Cloud); diff != "" {
				t.Errorf("the probe's result changed (-before +after):\n%s", diff)
			}
		})
	}
}

// A metadata service that never answers fails the cloud probe within its bound and with a clear condition; the
// rest of the report is as it would be without the probe.
func TestHangingMetadataLeavesTheRestOfTheReport(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	srv := cloudtest.NewHanging(t)
	cp, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, cloudtest.DMIAWS), Endpoint: srv.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rdma := &scriptedProbe{name: "rdma", res: discovery.Result{RDMADevices: []v1alpha1.RDMADevice{{Name: "mlx5_0", Ports: []v1alpha1.RDMAPort{{Number: 1}}}}}}
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:01")}}}

	start := time.Now()
	got := Observe(context.Background(), "n1", []discovery.Probe{cp, rdma, lldp}, now)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("observing took %s with a hanging metadata service", took)
	}
	want := Observe(context.Background(), "n1", []discovery.Probe{rdma, lldp}, now)
	if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec (-without the cloud probe +with it):\n%s", diff)
	}
	c := probeCondition(got, cloud.Name)
	if c.State != v1alpha1.ProbeDegraded || c.Reason != ReasonFailed ||
		!strings.HasPrefix(c.Message, "cloud: aws metadata at "+srv.URL+": instance-id: no answer within 200ms") {
		t.Errorf("cloud condition = %+v", c)
	}
	if diff := cmp.Diff(want.Status.Probes, got.Status.Probes[1:]); diff != "" {
		t.Errorf("the other probes' conditions (-without +with):\n%s", diff)
	}
}

// The agent publishes the cloud section through the real API server, which takes it, and writes nothing more
// while it stays the same.
func TestAgentPublishesTheCloudSection(t *testing.T) {
	testenv.Require(t)
	now := time.Unix(1_800_000_000, 0)
	srv := cloudtest.NewOCI(t, cloudtest.OCI{ID: ociInstance.InstanceID, AvailabilityDomain: ociInstance.Zone,
		RDMATopologyData: `{"customerHPCIslandId":"` + ociInstance.Layers[0] + `","customerNetworkBlock":"` + ociInstance.Layers[1] +
			`","customerLocalBlock":"` + ociInstance.Layers[2] + `","customerGpuMemoryFabric":"` + ociInstance.NVLinkDomain + `"}`})
	cp, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, cloudtest.DMIOCI), Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, "cloud-node-1", &now, cp)
	if !cycle(t, a) {
		t.Fatal("the first cycle wrote nothing")
	}
	if diff := cmp.Diff(&ociInstance, getReport(t, "cloud-node-1").Spec.Cloud); diff != "" {
		t.Errorf("stored spec.cloud (-want +got):\n%s", diff)
	}
	now = now.Add(time.Minute)
	if cycle(t, a) {
		t.Error("an unchanged cloud section was written again")
	}
}
