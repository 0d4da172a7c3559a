package gcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
	"github.com/fabricmap/fabricmap/topology"
)

// With --accelerator-domains, each A4X sub-block (an NVL72 rack) is an accelerator domain below its leaf; the
// A3 Ultra and A4 sub-blocks, NVLink inside the host only, get none.
func TestSubblocksOfA4XAreAcceleratorDomains(t *testing.T) {
	s := source(t, &gcptest.API{Project: project, Instances: instances}, nil, clusterNodes, nil)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tree, problems := topology.Build(in, topology.BuildOptions{RootName: "fabric", AcceleratorDomains: true})
	if len(problems) > 0 {
		t.Errorf("build problems: %v", problems)
	}
	type accel struct {
		Parent, NVLinkDomain string
		Nodes                []string
	}
	got := map[string]accel{}
	for name, d := range tree.Domains {
		if d.TierName == topology.TierNameAccelerator {
			got[name] = accel{d.Parent, d.NVLinkDomain, d.Nodes}
		}
	}
	want := map[string]accel{
		"nvl-" + subR1: {subR1, subR1, []string{"gke-a4x-r1-0", "gke-a4x-r1-1"}},
		"nvl-" + subR2: {subR2, subR2, []string{"gke-a4x-r2-0", "gke-a4x-r2-1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accelerator domains (-want +got):\n%s\n%v", diff, tree.Outline())
	}
	for _, node := range []string{"gke-a3u-0", "gke-a4-0"} {
		if path := tree.PathOf(node); len(path) == 0 || path[0].TierName == topology.TierNameAccelerator {
			t.Errorf("%s: path %v, want its sub-block as its lowest domain", node, path)
		}
	}
}
