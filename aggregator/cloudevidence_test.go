package aggregator

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources/gcp"
)

// cloudReport is a report whose only evidence is its cloud section.
func cloudReport(node string, provider v1alpha1.CloudProvider, nvlink string, layers ...string) *v1alpha1.NodeFabricReport {
	r := report(node)
	r.Spec.Cloud = &v1alpha1.CloudInstance{Provider: provider, InstanceID: "id-" + node, Layers: layers, NVLinkDomain: nvlink}
	return r
}

func TestCloudEvidence(t *testing.T) {
	reports := []*v1alpha1.NodeFabricReport{
		cloudReport("g1", v1alpha1.CloudProvider(gcp.Name), "sb-1", "cl-1", "blk-1", "sb-1"),
		cloudReport("g2", v1alpha1.CloudProvider(gcp.Name), "", "cl-1", "blk-1", "sb-2"),
		cloudReport("o1", "oci", "ocid1.gpumemoryfabric.oc1.iad.aaaa", "ocid1.hpcisland.oc1.iad.aaaa", "ocid1.networkblock.oc1.iad.aaaa", "ocid1.localblock.oc1.iad.aaaa"),
		cloudReport("a1", "aws", ""), // AWS's metadata gives no layers
		cloudReport("bad", v1alpha1.CloudProvider(gcp.Name), "", "only-one"),
		report("plain", "01"),
	}
	in, problems := pipeline.CloudEvidence(reports)
	var got []string
	for _, n := range in.Nodes {
		got = append(got, n.Node+"@"+n.Links[0].SwitchName+"/"+n.NVLinkDomain)
	}
	if len(got) != 3 {
		t.Fatalf("placed %v, want g1, g2 and o1", got)
	}
	if diff := cmp.Diff([]string{"g1@sb-1/sb-1", "g2@sb-2/"}, got[:2]); diff != "" {
		t.Errorf("GCE nodes (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(in.Nodes[2].Links[0].SwitchName, "local-block-") || !strings.HasPrefix(in.Nodes[2].NVLinkDomain, "gpu-fabric-") {
		t.Errorf("OCI node: %v, want o1 in a local-block-… with a gpu-fabric-… NVLink domain", got)
	}
	if len(problems) != 1 || problems[0].Node != "bad" || problems[0].Source != pipeline.SourceCloud {
		t.Errorf("problems %v, want the one-layer GCE section", problems)
	}
	for _, e := range in.SwitchLinks {
		if e.Source != pipeline.SourceCloud {
			t.Errorf("switch link %+v not from %s", e, pipeline.SourceCloud)
		}
	}
}

// TestCloudSectionsPlaceNodes places nodes on the real API server from their reports' cloud sections alone (a
// GKE cluster with no cloud credentials and no switch evidence): sub-blocks are leaves under their block.
func TestCloudSectionsPlaceNodes(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	for i, sb := range []string{"sb-1", "sb-1", "sb-2", "sb-2"} {
		upsertReport(t, cloudReport("meta-"+string(rune('a'+i)), v1alpha1.CloudProvider(gcp.Name), "", "cl-1", "blk-1", sb))
	}
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	reconcileOnce(t, r)
	want := map[string][]string{"sb-1": {"meta-a", "meta-b"}, "sb-2": {"meta-c", "meta-d"}, r.Config.RootName: {"sb-1", "sb-2"}}
	if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
		t.Errorf("HyperNodes from the cloud sections (-want +got):\n%s", diff)
	}
}
