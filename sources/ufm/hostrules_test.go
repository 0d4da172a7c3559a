package ufm

import (
	"fmt"
	"regexp"
	"slices"
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

// UFM marks the host it runs on, and its high-availability peer, by their server_operation_mode: with a
// management rule, they are management hosts whatever their names (mgmt-head-1 and mgmt-head-2 of the chassis
// fixture match no management pattern), left out unless a node's report gives their GUID.
func TestEvidenceUFMServerIsAManagementHost(t *testing.T) {
	defaults := ib.DefaultHostRules()
	noManagement := defaults
	noManagement.Management = nil
	ufmReason := func(name, mode string) string {
		return fmt.Sprintf("%q is the host UFM runs on (server_operation_mode %q), not a node to place", name, mode)
	}
	head1 := UnmappedHost{SystemGUID: "946dae0300c5f100", SystemName: "mgmt-head-1",
		Reason: ufmReason("mgmt-head-1", "HA_Active") + "; no report gives its GUID"}
	head2 := UnmappedHost{SystemGUID: "946dae0300c5f200", SystemName: "mgmt-head-2",
		Reason: ufmReason("mgmt-head-2", "HA_StandBy") + "; no report gives its GUID"}
	gpus := []string{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06"}
	blades := []string{"blade-01", "blade-02", "blade-03", "blade-04", "blade-05", "blade-06"}
	all := slices.Concat(blades, gpus)
	// standAlone is a one-switch fabric whose one host is UFM's (server_operation_mode "Stand_Alone"), named
	// name; another host, gpu-01, is a node.
	standAlone := func(name string) *Fabric {
		return &Fabric{
			Systems: []System{
				{SystemGUID: "248a070300f88fe0", GUID: "248a070300f88fe0", SystemName: "MF0;sw-1:MQM8700/U1", Type: "switch"},
				{SystemGUID: "946dae0300c1ff00", GUID: "946dae0300c1ff00", SystemName: name, Type: "host", ServerOperationMode: "Stand_Alone"},
				{SystemGUID: "946dae0300c10100", GUID: "946dae0300c10100", SystemName: "gpu-01", Type: "host", ServerOperationMode: "Not_UFM_Server"},
			},
			Links: []Link{
				{SourceGUID: "946dae0300c1ff00", SourcePort: "1", DestinationGUID: "248a070300f88fe0", DestinationPort: "1"},
				{SourceGUID: "946dae0300c10100", SourcePort: "1", DestinationGUID: "248a070300f88fe0", DestinationPort: "2"},
			},
		}
	}
	tests := []struct {
		name         string
		fabric       *Fabric
		opts         Options
		nodes        []string
		unmapped     []UnmappedHost
		reidentified []ib.HostNote
	}{{
		name:   "without host rules UFM's servers are nodes",
		fabric: loadFixture(t, "chassis"),
		nodes:  slices.Concat(blades, gpus, []string{"mgmt-head-1", "mgmt-head-2"}),
	}, {
		name:     "the default rules leave the active and the standby server out",
		fabric:   loadFixture(t, "chassis"),
		opts:     Options{Hosts: &defaults},
		nodes:    all,
		unmapped: []UnmappedHost{head1, head2},
	}, {
		name:   "without a management rule UFM's servers are nodes",
		fabric: loadFixture(t, "chassis"),
		opts:   Options{Hosts: &noManagement},
		nodes:  slices.Concat(blades, gpus, []string{"mgmt-head-1", "mgmt-head-2"}),
	}, {
		name:   "a node whose report gives the server's HCA GUID keeps it",
		fabric: loadFixture(t, "chassis"),
		opts: Options{Hosts: &defaults, ReportedNode: func(g ib.GUID) string {
			return map[ib.GUID]string{"946dae0300c5f100": "head-node-1"}[g]
		}},
		nodes:    slices.Concat(blades, gpus[:4], []string{"gpu-05", "gpu-06", "head-node-1"}),
		unmapped: []UnmappedHost{head2},
		reidentified: []ib.HostNote{{Host: "mgmt-head-1", GUID: "946dae0300c5f100", Description: "mgmt-head-1",
			Node: "head-node-1", Reason: ufmReason("mgmt-head-1", "HA_Active") + "; named after the node whose report gives its GUID"}},
	}, {
		name:   "a server the management pattern names keeps the pattern's reason",
		fabric: standAlone("ufm-01"),
		opts:   Options{Hosts: &defaults},
		nodes:  []string{"gpu-01"},
		unmapped: []UnmappedHost{{SystemGUID: "946dae0300c1ff00", SystemName: "ufm-01",
			Reason: `"ufm-01" is a management host (--management-host-regexp), not a node to place; no report gives its GUID`}},
	}, {
		name:   "a server with an adapter's default description is left out, not named by its GUID",
		fabric: standAlone("MT4129 ConnectX7 Mellanox Technologies"),
		opts:   Options{Hosts: &defaults},
		nodes:  []string{"gpu-01"},
		unmapped: []UnmappedHost{{SystemGUID: "946dae0300c1ff00", SystemName: "MT4129 ConnectX7 Mellanox Technologies",
			Reason: ufmReason("mt4129", "Stand_Alone") + "; no report gives its GUID"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(tc.fabric, tc.opts)
			var nodes []string
			for _, n := range in.Nodes {
				nodes = append(nodes, n.Node)
			}
			if diff := cmp.Diff(tc.nodes, nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unmapped, rep.Unmapped); diff != "" {
				t.Errorf("unmapped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reidentified, rep.Reidentified); diff != "" {
				t.Errorf("re-identified (-want +got):\n%s", diff)
			}
		})
	}
}
