package gcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/gcp"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
	"github.com/fabricmap/fabricmap/topology"
)

// The source ranks below the reports: a node a report places keeps the report's leaf (its other leaf is a
// conflict the report wins), and the source places only the nodes no report does.
func TestMergeBelowTheReports(t *testing.T) {
	s := source(t, &gcptest.API{Project: project, Instances: instances}, nil, clusterNodes, nil)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reports := topology.Input{Nodes: []topology.NodeEvidence{{
		Node: "gke-a4x-r1-0", Source: "reports", SelfReported: true,
		Links: []topology.SwitchLink{{SwitchID: "mac:00:11:22:33:44:55", SwitchName: "tor-7"}},
	}}}
	tree, _, conflicts := topology.Infer([]topology.SourceInput{
		{Name: "reports", Input: reports},
		{Name: gcp.Name, Input: in, Merge: s.Merge},
	}, []string{"reports", gcp.Name}, topology.BuildOptions{RootName: "fabric"})
	if diff := cmp.Diff([]topology.Conflict{{Node: "gke-a4x-r1-0", Kept: "reports", Dropped: gcp.Name}}, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	leafOf := func(node string) string {
		if p := tree.PathOf(node); len(p) > 0 {
			return p[0].Name
		}
		return ""
	}
	got := map[string]string{"gke-a4x-r1-0": leafOf("gke-a4x-r1-0"), "gke-a4x-r1-1": leafOf("gke-a4x-r1-1")}
	want := map[string]string{"gke-a4x-r1-0": "tor-7", "gke-a4x-r1-1": subR1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("leaves (-want +got):\n%s\n%v", diff, tree.Outline())
	}
}
