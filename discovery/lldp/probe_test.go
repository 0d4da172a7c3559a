package lldp

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// The agent starts probes that have a Start method.
var _ interface{ Start(context.Context) error } = (*Probe)(nil)

func TestRegistered(t *testing.T) {
	if !slices.Contains(discovery.Names(), ProbeName) {
		t.Fatalf("probe %q not registered: %v", ProbeName, discovery.Names())
	}
	probes, err := discovery.New(discovery.Config{}, ProbeName)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := probes[0].(*Probe); !ok || probes[0].Name() != ProbeName {
		t.Errorf("discovery.New built %T named %q", probes[0], probes[0].Name())
	}
	if _, err := New(discovery.Config{}, Settings{ListenSeconds: -1}); err == nil {
		t.Error("New accepted a negative listen time")
	}
}

func TestRunPcap(t *testing.T) {
	pcap := filepath.Join("testdata", switchesPcap)
	for _, tc := range []struct {
		name       string
		interfaces []string
		wantIface  string
	}{
		{"capture without interface names", nil, "pcap"},
		{"single configured interface", []string{"ens1f0np0"}, "ens1f0np0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(discovery.Config{}, Settings{Pcap: pcap, Interfaces: tc.interfaces})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(context.Background())
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := []v1alpha1.LinkNeighbor{
				{Source: v1alpha1.SourceLLDP, Interface: tc.wantIface, ChassisID: "0c:42:a1:11:22:33", ChassisIDSubtype: "mac",
					PortID: "Ethernet1/1", PortIDSubtype: "ifName", SystemName: "leaf01", PortDescription: "to gpu-node-7 eth2",
					SystemDescription: "SONiC Software Version: 202405", ManagementAddress: "10.0.0.11"},
				{Source: v1alpha1.SourceLLDP, Interface: tc.wantIface, ChassisID: "leaf02", ChassisIDSubtype: "local",
					PortID: "Ethernet1/2", PortIDSubtype: "ifName", SystemName: "leaf02", PortDescription: "to gpu-node-7 eth2",
					SystemDescription: "SONiC Software Version: 202405", ManagementAddress: "10.0.0.12"},
			}
			if !slices.Equal(res.Neighbors, want) {
				t.Errorf("neighbours =\n%+v\nwant (leaf03's TTL ran out)\n%+v", res.Neighbors, want)
			}
			if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], tc.wantIface+": malformed LLDP frame from 02:00:00:00:00:01") {
				t.Errorf("warnings = %q, want one about the truncated frame on %s", res.Warnings, tc.wantIface)
			}
			if res.NotApplicable != "" {
				t.Errorf("NotApplicable = %q", res.NotApplicable)
			}
		})
	}
}

func TestRunPcapMissing(t *testing.T) {
	p, _ := New(discovery.Config{}, Settings{Pcap: filepath.Join(t.TempDir(), "none.pcap")})
	if _, err := p.Run(context.Background()); err == nil {
		t.Error("Run succeeded on a missing capture")
	}
}

func TestRunWithoutInterfaces(t *testing.T) {
	p, _ := New(discovery.Config{}, Settings{Interfaces: []string{"nosuchif0"}, ListenSeconds: 1})
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.NotApplicable, "nosuchif0") {
		t.Errorf("NotApplicable = %q, want it to name the missing interface", res.NotApplicable)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "nosuchif0: ") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

func TestWarningLog(t *testing.T) {
	var w warningLog
	for i := range maxWarnings + 3 {
		w.add(strings.Repeat("w", i+1))
	}
	w.add("w")
	got := w.drain()
	if len(got) != maxWarnings+1 || got[0] != "w (2 times)" || got[maxWarnings] != "3 more distinct warnings left out" {
		t.Errorf("drain = %q", got)
	}
	if again := w.drain(); len(again) != 0 {
		t.Errorf("second drain = %q, want nothing", again)
	}
}
