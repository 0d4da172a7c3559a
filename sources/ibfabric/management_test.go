package ibfabric

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
)

// In testdata/sm-cufm.txt, a UFM Cyber-AI host (B11-P1-CUFM-02) and a UFM appliance (mtlxufm03) are
// management hosts by name; b11-p1-mgmt-01, named like nothing in particular, runs the subnet manager: the
// sminfo line appended to the capture gives the SM's LID, 17, which is its mlx5_0 port's. All three are left
// out unless a node's report gives their GUID; the SM host's other HCA (mlx5_1, on the other leaf) goes with it.
func TestEvidenceLeavesOutManagementHosts(t *testing.T) {
	fab := parse(t, "testdata/sm-cufm.txt")
	if sm := fab.SubnetManager; sm == nil || sm.LID != 17 || sm.Line != 103 {
		t.Fatalf("subnet manager %+v, want LID 17 from line 103", sm)
	}
	const smReason = "the subnet manager runs on it (the capture's SM LID 17, line 103, is a port of this host's HCAs), not a node to place"
	rules := ib.DefaultHostRules()
	for _, tc := range []struct {
		name      string
		reported  map[ib.GUID]string
		wantNodes []string
		wantNotes []ib.HostNote
	}{{
		name:      "no reports",
		wantNodes: []string{"dgx-b11-001", "dgx-b11-002", "dgx-b11-003", "dgx-b11-004", "dgx-b11-005"},
		wantNotes: []ib.HostNote{
			{Host: "b11-p1-cufm-02", GUID: "946dae0300f20004", Description: "B11-P1-CUFM-02 mlx5_0",
				Reason: `"b11-p1-cufm-02" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`},
			{Host: "b11-p1-mgmt-01", GUID: "946dae0300f20005", Description: "b11-p1-mgmt-01 mlx5_0", Reason: smReason + "; no report gives its GUID"},
			{Host: "b11-p1-mgmt-01", GUID: "946dae0300f20008", Description: "b11-p1-mgmt-01 mlx5_1", Reason: smReason + "; no report gives its GUID"},
			{Host: "mtlxufm03", GUID: "0c42a10300d30001", Description: "mtlxufm03 mlx5_0",
				Reason: `"mtlxufm03" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`},
		},
	}, {
		name:      "a node's report names the subnet manager's host",
		reported:  map[ib.GUID]string{"946dae0300f20005": "b11-p1-mgmt-01", "946dae0300f20008": "b11-p1-mgmt-01"},
		wantNodes: []string{"b11-p1-mgmt-01", "dgx-b11-001", "dgx-b11-002", "dgx-b11-003", "dgx-b11-004", "dgx-b11-005"},
		wantNotes: []ib.HostNote{
			{Host: "b11-p1-cufm-02", GUID: "946dae0300f20004", Description: "B11-P1-CUFM-02 mlx5_0",
				Reason: `"b11-p1-cufm-02" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`},
			{Host: "b11-p1-mgmt-01", GUID: "946dae0300f20005", Description: "b11-p1-mgmt-01 mlx5_0", Node: "b11-p1-mgmt-01",
				Reason: smReason + "; named after the node whose report gives its GUID"},
			{Host: "b11-p1-mgmt-01", GUID: "946dae0300f20008", Description: "b11-p1-mgmt-01 mlx5_1", Node: "b11-p1-mgmt-01",
				Reason: smReason + "; named after the node whose report gives its GUID"},
			{Host: "mtlxufm03", GUID: "0c42a10300d30001", Description: "mtlxufm03 mlx5_0",
				Reason: `"mtlxufm03" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Hosts: &rules, ReportedNode: func(g ib.GUID) string { return tc.reported[g] }}
			in, notes := evidenceNotes(t, fab, opts)
			if diff := cmp.Diff(tc.wantNodes, nodeNames(in)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}

	// Without host rules every name is taken, the subnet manager's host's too.
	in, notes := evidenceNotes(t, fab, Options{})
	if len(in.Nodes) != 8 || len(notes) != 0 {
		t.Errorf("without rules: nodes %q, notes %v; want all 8 hosts, no notes", nodeNames(in), notes)
	}
}

// HCAs that carry the adapter's default description and that no report names are unidentified: nodes named by
// their GUID, in the tree so that their leaf is right, noted as unidentified (never placement targets).
func TestEvidenceNotesUnidentifiedHCAs(t *testing.T) {
	rules := ib.DefaultHostRules()
	in, notes := evidenceNotes(t, parse(t, "testdata/unidentified.txt"), Options{Hosts: &rules})
	want := []string{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "guid-a088c20300e40004", "guid-a088c20300e40005"}
	if diff := cmp.Diff(want, nodeNames(in)); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	var unidentified []string
	for _, n := range notes {
		if n.Unidentified() {
			unidentified = append(unidentified, n.Node)
		}
	}
	if diff := cmp.Diff([]string{"guid-a088c20300e40004", "guid-a088c20300e40005"}, unidentified); diff != "" || len(notes) != 2 {
		t.Errorf("unidentified (-want +got):\n%s\nnotes: %v", diff, notes)
	}
}
