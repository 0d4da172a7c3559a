package lldp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// script writes an executable shell script standing in for lldpcli and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lldpcli")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLLDPDProbe(t *testing.T) {
	fixture, err := filepath.Abs(filepath.Join("testdata", "lldpcli-single.json"))
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     LLDPDSettings
		wantNA  string // substring of NotApplicable
		wantErr string // substring of the error
		wantN   int
	}{
		{name: "file", cfg: LLDPDSettings{CLIFile: fixture}, wantN: 1},
		{name: "running lldpcli", cfg: LLDPDSettings{CLIPath: script(t, `[ "$*" = "-f json show neighbors details" ] || exit 9; cat `+fixture)}, wantN: 1},
		{name: "not installed", cfg: LLDPDSettings{CLIPath: "/nonexistent/lldpcli"}, wantNA: "not installed"},
		{name: "lldpd not running", cfg: LLDPDSettings{CLIPath: script(t, `echo "unable to connect to lldpd daemon" >&2; exit 1`)}, wantNA: "lldpd is not running"},
		{name: "lldpcli fails", cfg: LLDPDSettings{CLIPath: script(t, `echo "permission denied" >&2; exit 1`)}, wantErr: "permission denied"},
		{name: "garbage output", cfg: LLDPDSettings{CLIFile: garbage}, wantErr: "garbage.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := NewLLDPD(tc.cfg).Run(context.Background())
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if !strings.Contains(res.NotApplicable, tc.wantNA) || (tc.wantNA == "") != (res.NotApplicable == "") {
				t.Errorf("NotApplicable = %q, want %q", res.NotApplicable, tc.wantNA)
			}
			if len(res.Neighbors) != tc.wantN {
				t.Fatalf("neighbours = %+v, want %d", res.Neighbors, tc.wantN)
			}
			if tc.wantN > 0 {
				if n := res.Neighbors[0]; n.Source != v1alpha1.SourceLLDPD || n.SystemName != "leaf01" || n.Interface != "ens1f0np0" {
					t.Errorf("neighbour = %+v", n)
				}
				// The port's VLAN, maximum frame size and aggregation lldpd decoded reach the report.
				want := v1alpha1.LinkNeighbor{PortVLANID: 100, MaxFrameSize: 9216,
					LinkAggregation: &v1alpha1.LinkAggregation{Capable: true, Enabled: true, PortID: 100001}}
				n := res.Neighbors[0]
				got := v1alpha1.LinkNeighbor{PortVLANID: n.PortVLANID, MaxFrameSize: n.MaxFrameSize, LinkAggregation: n.LinkAggregation}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the port's LLDP fields (-want +got):\n%s", diff)
				}
			}
		})
	}
}
