package cloudlayers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// TestMetadataNode: a node's instance metadata gives its place under the keys and values its cloud's API
// source gives (OCI's through OCILabels, as the API source's place does), the NVLink domain as the clique label,
// and anything but three layers is refused.
func TestMetadataNode(t *testing.T) {
	const island, block, local, fabric = "ocid1.computehpcisland.oc1.iad.aaaai1", "ocid1.computenetworkblock.oc1.iad.aaaab1",
		"ocid1.computelocalblock.oc1.iad.aaaal1", "ocid1.computegpumemoryfabric.oc1.iad.aaaaf1"
	for _, tc := range []struct {
		name    string
		node    func(node string, layers []string, nvlink string) (labels.Node, error)
		layers  []string
		nvlink  string
		want    labels.Node
		wantErr string
	}{{
		name:   "gcp: cluster, block and sub-block as label values",
		node:   GCPMetadataNode,
		layers: []string{"cl/1", "blk-1", "sb-1"},
		want: labels.Node{Name: "n1", Labels: map[string]string{
			GCPClusterKey: labels.Value("cl/1"), GCPBlockKey: "blk-1", GCPSubblockKey: "sb-1"}},
	}, {
		name:   "gcp: an NVLink sub-block is the clique",
		node:   GCPMetadataNode,
		layers: []string{"cl-1", "blk-1", "sb-1"},
		nvlink: "sb-1",
		want: labels.Node{Name: "n1", Labels: map[string]string{
			GCPClusterKey: "cl-1", GCPBlockKey: "blk-1", GCPSubblockKey: "sb-1", labels.CliqueLabel: "sb-1"}},
	}, {
		name:    "gcp: two layers",
		node:    GCPMetadataNode,
		layers:  []string{"cl-1", "blk-1"},
		wantErr: "2 layers, want cluster, block and sub-block",
	}, {
		name:   "oci: the API source's values, the GPU memory fabric as the clique",
		node:   OCIMetadataNode,
		layers: []string{island, block, local},
		nvlink: fabric,
		want:   labels.Node{Name: "n1", Labels: OCILabels(island, block, local, fabric)},
	}, {
		name:   "oci: no fabric, no clique",
		node:   OCIMetadataNode,
		layers: []string{island, block, local},
		want: labels.Node{Name: "n1", Labels: map[string]string{
			OCIHPCIslandKey: OCIHPCIsland.Value(island), OCINetworkBlockKey: OCINetworkBlock.Value(block),
			OCILocalBlockKey: OCILocalBlock.Value(local)}},
	}, {
		name:    "oci: four layers",
		node:    OCIMetadataNode,
		layers:  []string{island, block, local, local},
		wantErr: "4 layers, want HPC island, network block and local block",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.node("n1", tc.layers, tc.nvlink)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("node (-want +got):\n%s", diff)
			}
		})
	}
}
