package cloudlayers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// TestOCIValue: OCIDs become short, valid, readable label values, the same every time.
func TestOCIValue(t *testing.T) {
	tests := []struct {
		name, ocid, want string
		kind             OCIKind
	}{{
		name: "a local block",
		kind: OCILocalBlock,
		ocid: "ocid1.computelocalblock.oc1.iad.anuwcljrabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmx7k2qa",
		want: "local-block-x7k2qa-aa4f9f46",
	}, {
		name: "an HPC island in upper case, which OCI does not write",
		kind: OCIHPCIsland,
		ocid: "OCID1.COMPUTEHPCISLAND.OC1.IAD.ANUWCLJRX7K2QA",
		want: "hpc-island-x7k2qa-4ada1780",
	}, {
		name: "a short unique ID keeps what there is",
		kind: OCINetworkBlock,
		ocid: "ocid1.computenetworkblock.oc1.iad.ab",
		want: "network-block-ab-76186281",
	}, {
		name: "no unique ID",
		kind: OCIGPUMemoryFabric,
		ocid: "ocid1.computegpumemoryfabric.oc1.iad.",
		want: "gpu-fabric-16b94101",
	}, {
		name: "empty",
		ocid: "",
		want: "",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.kind.Value(tc.ocid)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s.Value(%q) (-want +got):\n%s", tc.kind, tc.ocid, diff)
			}
			if got == "" {
				return
			}
			if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 {
				t.Errorf("%q is not a label value: %v", got, msgs)
			}
			if len(got) > 29 {
				t.Errorf("%q is longer than 29 characters", got)
			}
		})
	}
	// Two OCIDs that end alike still differ.
	a := OCILocalBlock.Value("ocid1.computelocalblock.oc1.iad.aaaaaaaax7k2qa")
	b := OCILocalBlock.Value("ocid1.computelocalblock.oc1.phx.aaaaaaaax7k2qa")
	if a == b {
		t.Errorf("two OCIDs ending alike give one value %q", a)
	}
	if err := labels.ValidateKeys(OCIKeys); err != nil {
		t.Errorf("OCIKeys: %v", err)
	}
}
