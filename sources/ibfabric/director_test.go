package ibfabric

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// dirID is the director's switch in testdata/director.txt: its system image GUID, shared by its 2 fabric and 4
// line ASICs.
const dirID = "guid:98039b0300c0a100"

// A director (CS8500: 2 fabric and 4 line ASICs sharing a system image GUID) is one switch: the hosts on its
// 4 line cards are behind one switch named after the chassis, the cables between its cards vanish, and the
// plain leaves cabled to two of its line cards link to it once each.
func TestEvidenceFoldsDirectorASICs(t *testing.T) {
	in := evidence(t, parse(t, "testdata/director.txt"), Options{})
	type link struct{ Node, ID, Name, Port string }
	var got []link
	for _, e := range in.Nodes {
		for _, l := range e.Links {
			got = append(got, link{e.Node, l.SwitchID, l.SwitchName, l.Port})
		}
	}
	want := []link{
		{"gpu-01", dirID, "ib-dir-01", "L01/U1/1"}, {"gpu-02", dirID, "ib-dir-01", "L01/U1/2"},
		{"gpu-03", dirID, "ib-dir-01", "L02/U1/1"}, {"gpu-04", dirID, "ib-dir-01", "L02/U1/2"},
		{"gpu-05", dirID, "ib-dir-01", "L03/U1/1"}, {"gpu-06", dirID, "ib-dir-01", "L03/U1/2"},
		{"gpu-07", dirID, "ib-dir-01", "L04/U1/1"}, {"gpu-08", dirID, "ib-dir-01", "L04/U1/2"},
		// Plain leaves keep their node GUIDs and plain port numbers, as before directors were folded.
		{"gpu-09", "guid:b83fd20300d10001", "ib-leaf-01", "1"}, {"gpu-10", "guid:b83fd20300d10001", "ib-leaf-01", "2"},
		{"gpu-11", "guid:b83fd20300d10002", "ib-leaf-02", "1"}, {"gpu-12", "guid:b83fd20300d10002", "ib-leaf-02", "2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host links (-want +got):\n%s", diff)
	}
	wantLinks := []topology.SwitchEdge{
		{A: dirID, B: "guid:b83fd20300d10001", AName: "ib-dir-01", BName: "ib-leaf-01", Source: Name},
		{A: dirID, B: "guid:b83fd20300d10002", AName: "ib-dir-01", BName: "ib-leaf-02", Source: Name},
	}
	if diff := cmp.Diff(wantLinks, in.SwitchLinks); diff != "" {
		t.Errorf("switch links (-want +got):\n%s", diff)
	}

	// In the tree, the hosts of all 4 line cards are one domain named after the chassis; no domain holds the
	// hosts of one card alone.
	tree, probs := topology.Build(in, topology.BuildOptions{})
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := tree.Domains["ib-dir-01"]
	if dir == nil {
		t.Fatalf("no domain ib-dir-01 in %q", tree.Outline())
	}
	onCards := []string{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06", "gpu-07", "gpu-08"}
	if diff := cmp.Diff(onCards, slices.Sorted(slices.Values(dir.Nodes))); diff != "" {
		t.Errorf("ib-dir-01's nodes (-want +got):\n%s", diff)
	}
	for name, d := range tree.Domains {
		if name == "ib-dir-01" {
			continue
		}
		for _, n := range d.Nodes {
			if slices.Contains(onCards, n) {
				t.Errorf("domain %q holds director host %s: %q", name, n, tree.Outline())
			}
		}
	}
}
