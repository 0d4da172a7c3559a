package labels_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// TestNVLinkFromLabels: the label source (the aggregator's, and `fabricmap topology --from-labels`) reads the
// NVLink domain from GPU Feature Discovery's clique label and the sub-domain from topograph's; without them
// --accelerator-domains added no NVLink tier at all.
func TestNVLinkFromLabels(t *testing.T) {
	const clique = "7c3f0e2a-9b1d-4e6f-8a2c-3b4d5e6f7081.1"
	keys := []string{"example.com/spine", "example.com/leaf"}
	nodes := []labels.Node{
		{Name: "gb-r1-t01", Labels: map[string]string{keys[0]: "s1", keys[1]: "leaf-1", labels.CliqueLabel: clique, labels.SubDomainLabel: "1821724000123"}},
		{Name: "gb-r2-t01", Labels: map[string]string{keys[0]: "s1", keys[1]: "leaf-2", labels.CliqueLabel: clique}},
		{Name: "cpu-1", Labels: map[string]string{keys[0]: "s1", keys[1]: "leaf-3", labels.SubDomainLabel: "stray"}},
	}
	in, problems := labels.Evidence(nodes, keys)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got := map[string][2]string{}
	for _, e := range in.Nodes {
		got[e.Node] = [2]string{e.NVLinkDomain, e.NVLinkSubDomain}
	}
	want := map[string][2]string{"gb-r1-t01": {clique, "1821724000123"}, "gb-r2-t01": {clique, ""}, "cpu-1": {"", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("NVLink evidence (-want +got):\n%s", diff)
	}
	tree, _ := topology.Build(in, topology.BuildOptions{AcceleratorDomains: true})
	// The clique spans leaf-1 and leaf-2: one accelerator domain below each, marked as a part.
	for _, leaf := range []string{"leaf-1", "leaf-2"} {
		d := tree.Domains[topology.SafeName("nvl-"+clique+"."+leaf)]
		if d == nil || d.Parent != leaf || !d.NVLinkPart || d.NVLinkDomain != clique {
			t.Errorf("accelerator domain below %s: %+v\n%v", leaf, d, tree.Outline())
		}
	}
}
