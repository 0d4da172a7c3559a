package ctl

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/internal/version"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// `version` and `--version` print the same line, named as the binary runs (the plugin as kubectl fabricmap);
// -o json gives the fields.
func TestVersion(t *testing.T) {
	details := version.Get().Details()
	for _, tc := range []struct {
		arg0 string
		args []string
		want string
	}{
		{"fabricmap", []string{"version"}, "fabricmap " + details + "\n"},
		{"fabricmap", []string{"--version"}, "fabricmap " + details + "\n"},
		{"/usr/local/bin/kubectl-fabricmap", []string{"--version"}, "kubectl fabricmap " + details + "\n"},
		{"kubectl-fabricmap", []string{"version", "-o", "text"}, "kubectl fabricmap " + details + "\n"},
	} {
		var out bytes.Buffer
		root := NewRootAs(tc.arg0, clouds.Kinds)
		root.SetArgs(tc.args)
		root.SetOut(&out)
		if err := root.Execute(); err != nil {
			t.Fatalf("%s %v: %v", tc.arg0, tc.args, err)
		}
		if diff := cmp.Diff(tc.want, out.String()); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tc.arg0, tc.args, diff)
		}
	}
	stdout, stderr, err := run(t, "version", "-o", "json")
	if err != nil {
		t.Fatalf("version -o json: %v\n%s", err, stderr)
	}
	var got version.Info
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("version -o json printed %q: %v", stdout, err)
	}
	if diff := cmp.Diff(version.Get(), got); diff != "" {
		t.Errorf("version -o json (-want +got):\n%s", diff)
	}
}
