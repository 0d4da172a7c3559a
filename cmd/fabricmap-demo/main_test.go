package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinkPrograms: the folder the demo runs its binaries from holds the aggregator and the CLI as links to the
// demo itself and the agent as a link to --bin-dir's; without an agent there, the demo stops before it starts
// anything, naming the folder.
func TestLinkPrograms(t *testing.T) {
	self := filepath.Join(t.TempDir(), "fabricmap-demo")
	binDir := t.TempDir()
	agent := filepath.Join(binDir, "fabricmap-agent")
	for _, f := range []string{self, agent} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		binDir  string
		want    map[string]string
		wantErr string
	}{
		{name: "agent beside", binDir: binDir,
			want: map[string]string{"fabricmap": self, "fabricmap-aggregator": self, "fabricmap-agent": agent}},
		{name: "no agent", binDir: t.TempDir(), wantErr: "the agent (make demo-build builds it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := linkPrograms(self, tc.binDir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.binDir) {
					t.Fatalf("linkPrograms = %q, %v; want an error naming %s with %q", dir, err, tc.binDir, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, e := range entries {
				target, err := os.Readlink(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
				got[e.Name()] = target
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}
