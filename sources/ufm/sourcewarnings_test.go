package ufm

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// What the source says, in its log (the CLI's warnings, the aggregator's log) and its notes (the aggregator's
// Event on the leader Lease): the lab export's gateways by name and type, the storage leaf with the flag that
// keeps it out, and about a clean dump neither.
func TestSourceSaysGatewaysAndStorageRails(t *testing.T) {
	tests := []struct {
		name, dump string
		rules      Rules
		logs       []string // in the log
		notLogs    []string // not in the log
		notes      []string // hosts noted as left out, with a part of the reason: "<host>: <part>"
	}{{
		name: "the lab export's gateways",
		dump: "lab",
		logs: []string{
			"gateway MF0;lab-gw-1:MSX6710/GW (0002c90300b0c001, listed by UFM as a host)",
			"gateway MF0;lab-gw-2:MSX6710/GW (0002c90300b0d003, listed by UFM as a host)",
			"gateway gw-01 (0002c90300a1b2c0)",
		},
		notLogs: []string{"--ufm-storage-devices"},
		notes: []string{
			"gw-01: UFM lists it as a gateway",
			"MF0;lab-gw-1:MSX6710/GW: UFM lists it as a host, but its name is a gateway's node description",
			"MF0;lab-gw-2:MSX6710/GW: UFM lists it as a host, but its name is a gateway's node description",
			"LAB_03: not a DNS-1123 subdomain",
		},
	}, {
		name:    "a storage rail joins the scalable units",
		dump:    "railopt",
		logs:    []string{`leaf \"ib-stor-leaf-1\" (guid:b83fd20300b00101): 8 hosts through one HCA port each (mlx5_8)`, "pass --ufm-storage-devices=mlx5_8"},
		notLogs: []string{"gateway"},
	}, {
		name:    "the storage devices named",
		dump:    "railopt",
		rules:   Rules{StorageDevices: []string{"mlx5_8"}},
		notLogs: []string{"--ufm-storage-devices", "gateway"},
	}, {
		name:    "a clean dump",
		dump:    "threetier",
		notLogs: []string{"--ufm-storage-devices", "gateway", "level=WARN"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			opts := SourceOptions{Dump: "testdata/" + tc.dump, Rules: tc.rules}
			src, err := opts.Source(logs.logger())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := src.Evidence(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.logs {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, logs.String())
				}
			}
			for _, unwanted := range tc.notLogs {
				if strings.Contains(logs.String(), unwanted) {
					t.Errorf("the log says %q:\n%s", unwanted, logs.String())
				}
			}
			var got []string
			for _, n := range src.Notes() {
				part := ""
				for _, w := range tc.notes {
					if host, p, _ := strings.Cut(w, ": "); host == n.Host && strings.Contains(n.Reason, p) {
						part = p
					}
				}
				got = append(got, n.Host+": "+part)
			}
			if diff := cmp.Diff(tc.notes, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}
