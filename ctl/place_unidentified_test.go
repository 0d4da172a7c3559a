package ctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A leaf with 3 named hosts and 2 HCAs with the adapter's default description (testdata of sources/ibfabric,
// through `fabricmap topology`): the tree keeps the 2 as guid-<GUID> nodes, and `fabricmap place --topology`
// never puts a rank on them, saying on standard error that it skipped them.
func TestPlaceSkipsUnidentifiedNodes(t *testing.T) {
	tree, stderr, err := run(t, "topology", "--from-ibnetdiscover", filepath.Join("..", "sources", "ibfabric", "testdata", "unidentified.txt"), "-o", "yaml")
	if err != nil {
		t.Fatalf("topology: %v\n%s", err, stderr)
	}
	for _, g := range []string{"guid-a088c20300e40004", "guid-a088c20300e40005"} {
		if !strings.Contains(tree, g) {
			t.Fatalf("the tree lacks %s:\n%s", g, tree)
		}
		if !strings.Contains(stderr, `unidentified: taken as node "`+g+`", never a placement target`) {
			t.Errorf("topology's standard error does not list %s as unidentified:\n%s", g, stderr)
		}
	}
	file := filepath.Join(t.TempDir(), "tree.yaml")
	if err := os.WriteFile(file, []byte(tree), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Nodes dump that (wrongly) holds a Node of an unidentified node's name: it is skipped all the same.
	nodes := filepath.Join(t.TempDir(), "nodes.yaml")
	var dump strings.Builder
	dump.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for _, n := range []string{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "guid-a088c20300e40004"} {
		dump.WriteString("- apiVersion: v1\n  kind: Node\n  metadata: {name: " + n + "}\n  status: {allocatable: {nvidia.com/gpu: \"8\"}}\n")
	}
	if err := os.WriteFile(nodes, []byte(dump.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	skipped := "warning: --topology " + file + ": 2 unidentified nodes skipped, never placement targets " +
		"(HCAs with the adapter's default description that no node's report names): guid-a088c20300e40004, guid-a088c20300e40005\n"
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string // substrings of stdout
		wantErr string
	}{
		{name: "the 3 named hosts of the leaf", args: []string{"--gang", "pods=3,nvidia.com/gpu=8,hard-tier=leaf"},
			want: []string{"3 pods in leaf ib-leaf-01 (tier 1)", "gpu-01", "gpu-02", "gpu-03"}},
		// With the 2 unidentified nodes counted as 8-GPU nodes, the leaf would take 5.
		{name: "4 pods do not fit in the leaf", args: []string{"--gang", "pods=4,nvidia.com/gpu=8,hard-tier=leaf"}, wantErr: "no placement"},
		{name: "the fabric holds 5, not 7", args: []string{"--gang", "pods=7,nvidia.com/gpu=8"}, wantErr: "(5 pods of this request at most)"},
		{name: "5 pods take every named host", args: []string{"--gang", "pods=5,nvidia.com/gpu=8", "-o", "json"},
			want: []string{`"gpu-01"`, `"gpu-02"`, `"gpu-03"`, `"gpu-04"`, `"gpu-05"`}},
		{name: "a Nodes dump naming one", args: []string{"--nodes", nodes, "--gang", "pods=6,nvidia.com/gpu=8"}, wantErr: "(5 pods of this request at most)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, append([]string{"place", "--topology", file}, tc.args...)...)
			if !strings.Contains(stderr, skipped) {
				t.Errorf("standard error lacks %q:\n%s", skipped, stderr)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q; output:\n%s", err, tc.wantErr, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "guid-") {
				t.Errorf("a rank on an unidentified node:\n%s", out)
			}
		})
	}
}
