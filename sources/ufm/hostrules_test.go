package ufm

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// defaultDescriptions returns the railopt fixture with dgx-01 to dgx-04 as UFM shows hosts that never set
// their HCAs' node descriptions: every HCA, and so the system, named "MT4129 ConnectX7 Mellanox Technologies".
// Such descriptions name no device either, so --ufm-storage-devices cannot tell their storage HCAs: the
// storage leaf joins the first unit's domain, which is named after it.
func defaultDescriptions(t *testing.T) *Fabric {
	t.Helper()
	f := loadFixture(t, "railopt")
	re := regexp.MustCompile(`^dgx-0[1-4]( mlx5_\d+)?$`)
	fix := func(s *string) {
		if re.MatchString(*s) {
			*s = "MT4129 ConnectX7 Mellanox Technologies"
		}
	}
	for i := range f.Systems {
		fix(&f.Systems[i].SystemName)
	}
	for i := range f.Links {
		fix(&f.Links[i].SourceNodeDescription)
		fix(&f.Links[i].DestinationNodeDescription)
	}
	for i := range f.Ports {
		fix(&f.Ports[i].SystemName)
		fix(&f.Ports[i].NodeDescription)
	}
	return f
}

func TestEvidenceHostRules(t *testing.T) {
	defaults := ib.DefaultHostRules()
	const defaultReason = `"MT4129 ConnectX7 Mellanox Technologies" is the adapter's default node description, which names no host`
	byGUID := func(sys string) ib.HostNote {
		return ib.HostNote{Host: "mt4129", GUID: ib.GUID(sys), Description: "MT4129 ConnectX7 Mellanox Technologies",
			Node: "guid-" + sys, Reason: defaultReason + "; no report gives its GUID, which names it"}
	}
	ufmReason := `"ufm-01" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`
	tests := []struct {
		name         string
		opts         Options
		want         []string // tree outline
		problems     bool
		unmapped     []UnmappedHost
		reidentified []ib.HostNote
	}{{
		name: "without host rules the four hosts are one node mt4129, and ufm-01 a member",
		opts: Options{StorageDevice: isStorage},
		want: []string{
			"fabric(2)ib-stor-leaf-1-rails,ib-su2-leaf-r1-rails",
			"ib-stor-leaf-1-rails(1)mt4129,ufm-01",
			"ib-su2-leaf-r1-rails(1)dgx-05,dgx-06,dgx-07,dgx-08",
		},
	}, {
		name: "default rules: each host a node of its system GUID, ufm-01 left out",
		opts: Options{StorageDevice: isStorage, Hosts: &defaults},
		want: []string{
			"fabric(2)ib-stor-leaf-1-rails,ib-su2-leaf-r1-rails",
			"ib-stor-leaf-1-rails(1)guid-946dae0300c10100,guid-946dae0300c10200,guid-946dae0300c10300,guid-946dae0300c10400",
			"ib-su2-leaf-r1-rails(1)dgx-05,dgx-06,dgx-07,dgx-08",
		},
		unmapped: []UnmappedHost{{SystemGUID: "946dae0300c1ff00", SystemName: "ufm-01", Reason: ufmReason}},
		reidentified: []ib.HostNote{
			byGUID("946dae0300c10100"), byGUID("946dae0300c10200"), byGUID("946dae0300c10300"), byGUID("946dae0300c10400"),
		},
	}, {
		name: "a report that gives an HCA's GUID names its host",
		opts: Options{StorageDevice: isStorage, Hosts: &defaults, ReportedNode: func(g ib.GUID) string {
			return map[ib.GUID]string{"946dae0300c10201": "dgx-02"}[g] // dgx-02's second HCA
		}},
		want: []string{
			"fabric(2)ib-stor-leaf-1-rails,ib-su2-leaf-r1-rails",
			"ib-stor-leaf-1-rails(1)dgx-02,guid-946dae0300c10100,guid-946dae0300c10300,guid-946dae0300c10400",
			"ib-su2-leaf-r1-rails(1)dgx-05,dgx-06,dgx-07,dgx-08",
		},
		unmapped: []UnmappedHost{{SystemGUID: "946dae0300c1ff00", SystemName: "ufm-01", Reason: ufmReason}},
		reidentified: []ib.HostNote{
			byGUID("946dae0300c10100"),
			{Host: "mt4129", GUID: "946dae0300c10200", Description: "MT4129 ConnectX7 Mellanox Technologies", Node: "dgx-02",
				Reason: defaultReason + "; named after the node whose report gives its GUID"},
			byGUID("946dae0300c10300"), byGUID("946dae0300c10400"),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(defaultDescriptions(t), tc.opts)
			tree, probs := topology.Build(in, topology.BuildOptions{})
			if (len(probs) > 0) != tc.problems {
				t.Errorf("problems: %v, want some: %v", probs, tc.problems)
			}
			if diff := cmp.Diff(tc.unmapped, rep.Unmapped); diff != "" {
				t.Errorf("unmapped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reidentified, rep.Reidentified); diff != "" {
				t.Errorf("re-identified (-want +got):\n%s", diff)
			}
			notes := rep.Notes() // both, as the aggregator's Events say them: the host left out has no node
			if len(notes) != len(tc.unmapped)+len(tc.reidentified) {
				t.Errorf("notes = %v, want the %d re-identified and %d left out", notes, len(tc.reidentified), len(tc.unmapped))
			}
			for _, n := range notes {
				if n.Host == "ufm-01" && (n.Node != "" || n.GUID != "946dae0300c1ff00" || n.Reason != ufmReason) {
					t.Errorf("note on ufm-01 = %+v, want it left out with its GUID and reason", n)
				}
			}
			if tc.want == nil {
				return
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}
