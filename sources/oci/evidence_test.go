package oci

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
	"github.com/fabricmap/fabricmap/topology"
)

const (
	gb200 = "BM.GPU.GB200.4"
	gb300 = "BM.GPU.GB300.4"
	h100  = "BM.GPU.H100.8"
	vm    = "VM.Standard.E5.Flex"
)

var machine = ocitest.NewMachine

// ociNode is a Node on an OCI instance that no compute host of the fixture runs.
func ociNode(name string) nodes.Node {
	return nodes.Node{Name: name, ProviderID: "oci://" + ocitest.OCID("instance", name)}
}

// TestEvidence runs the source against the stand-in API through the SDK and builds the tree of its evidence.
func TestEvidence(t *testing.T) {
	noMetadata(t)
	tests := []struct {
		name       string
		machines   []ocitest.Machine
		nodes      []nodes.Node   // Nodes besides the machines'
		hosts      []ocitest.Host // hosts besides the machines'
		pageSize   int
		throttle   int
		accel      bool
		want       []string          // the tree's outline
		nvlink     map[string]string // node → NVLink domain
		requests   int
		warn, info []string // what the warning and the info line about left-out Nodes say
	}{{
		name: "GB200 and GB300 with a GPU memory fabric, H100 without, a VM shape outside cluster networks",
		machines: []ocitest.Machine{
			machine("gb-1", gb200, "island-1", "block-1", "local-1", "fabric-1"),
			machine("gb-2", gb200, "island-1", "block-1", "local-1", "fabric-1"),
			machine("gb3-1", gb300, "island-1", "block-1", "local-4", "fabric-2"),
			machine("h100-1", h100, "island-1", "block-2", "local-2", ""),
			machine("h100-2", h100, "island-1", "block-2", "local-3", ""),
			machine("vm-1", vm, "", "", "", ""),
		},
		want: []string{
			block("block-1") + "(2)" + local("local-1") + "," + local("local-4"),
			block("block-2") + "(2)" + local("local-2") + "," + local("local-3"),
			"fabric(3)" + block("block-1") + "," + block("block-2"),
			local("local-1") + "(1)gb-1,gb-2",
			local("local-2") + "(1)h100-1",
			local("local-3") + "(1)h100-2",
			local("local-4") + "(1)gb3-1",
		},
		nvlink:   map[string]string{"gb-1": fabric("fabric-1"), "gb-2": fabric("fabric-1"), "gb3-1": fabric("fabric-2")},
		requests: 1,
		warn:     []string{"count=1", "vm-1 (compute host of shape VM.Standard.E5.Flex has no hpcIslandId, localBlockId, networkBlockId)"},
	}, {
		name: "instances missing from the answer are left out; hosts without a Node are ignored",
		machines: []ocitest.Machine{
			machine("h100-1", h100, "island-1", "block-1", "local-1", ""),
			machine("h100-2", h100, "island-1", "block-1", "local-2", ""),
		},
		nodes: []nodes.Node{ociNode("gone-1"), ociNode("gone-2")},
		hosts: []ocitest.Host{
			{ID: ocitest.OCID("computehost", "free"), Shape: h100, HPCIsland: ocitest.OCID("computehpcisland", "island-1")},
			machine("elsewhere", h100, "island-2", "block-9", "local-9", "").Host,
		},
		want: []string{
			"fabric(2)" + local("local-1") + "," + local("local-2"), // one network block: the root
			local("local-1") + "(1)h100-1",
			local("local-2") + "(1)h100-2",
		},
		requests: 1,
		warn: []string{"count=2", "gone-1 (no compute host of the compartment runs its instance)",
			"gone-2 (no compute host of the compartment runs its instance)"},
	}, {
		name:     "Nodes of other providers are left out, a malformed OCI one listed",
		machines: []ocitest.Machine{machine("h100-1", h100, "island-1", "block-1", "local-1", "")},
		nodes: []nodes.Node{
			{Name: "aws-1", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
			{Name: "control-plane"},
			{Name: "bad-1", ProviderID: "oci://i-0123456789abcdef0"},
		},
		want:     []string{"fabric(2)" + local("local-1"), local("local-1") + "(1)h100-1"},
		requests: 1,
		warn:     []string{"count=1", "bad-1 (providerID oci://i-0123456789abcdef0 names no instance OCID)"},
		info:     []string{"Nodes not on OCI instances left out", "count=2", "aws-1 (aws)", "control-plane (no providerID)"},
	}, {
		name: "seven hosts over four pages",
		machines: []ocitest.Machine{
			machine("n1", h100, "island-1", "block-1", "local-1", ""), machine("n2", h100, "island-1", "block-1", "local-1", ""),
			machine("n3", h100, "island-1", "block-1", "local-2", ""), machine("n4", h100, "island-1", "block-2", "local-3", ""),
			machine("n5", h100, "island-2", "block-3", "local-4", ""), machine("n6", h100, "island-2", "block-3", "local-5", ""),
			machine("n7", h100, "island-2", "block-4", "local-6", ""),
		},
		pageSize: 2,
		want: []string{
			block("block-1") + "(2)" + local("local-1") + "," + local("local-2"),
			block("block-2") + "(2)" + local("local-3"),
			block("block-3") + "(2)" + local("local-4") + "," + local("local-5"),
			block("block-4") + "(2)" + local("local-6"),
			"fabric(4)" + island("island-1") + "," + island("island-2"),
			island("island-1") + "(3)" + block("block-1") + "," + block("block-2"),
			island("island-2") + "(3)" + block("block-3") + "," + block("block-4"),
			local("local-1") + "(1)n1,n2", local("local-2") + "(1)n3", local("local-3") + "(1)n4",
			local("local-4") + "(1)n5", local("local-5") + "(1)n6", local("local-6") + "(1)n7",
		},
		requests: 4,
	}, {
		name: "throttled twice, then answered",
		machines: []ocitest.Machine{
			machine("h100-1", h100, "island-1", "block-1", "local-1", ""),
			machine("h100-2", h100, "island-1", "block-1", "local-1", ""),
		},
		throttle: 2,
		want:     []string{"fabric(2)" + local("local-1"), local("local-1") + "(1)h100-1,h100-2"},
		requests: 3,
	}, {
		name:     "NVLink domains below the local blocks, one spanning two (the demo's fixture)",
		machines: ocitest.Fixture(),
		accel:    true,
		want: []string{
			block("block-1") + "(3)" + local("local-1") + "," + local("local-2"),
			block("block-2") + "(3)" + local("local-3"),
			"fabric(4)" + block("block-1") + "," + block("block-2"),
			local("local-1") + "(2)" + topology.SafeName("nvl-"+fabric("nvl-a")+"."+local("local-1")),
			local("local-2") + "(2)" + topology.SafeName("nvl-"+fabric("nvl-b")) + "," + topology.SafeName("nvl-"+fabric("nvl-a")+"."+local("local-2")),
			local("local-3") + "(2)h100-1,h100-2",
			topology.SafeName("nvl-"+fabric("nvl-a")+"."+local("local-1")) + "(1)gb-a1,gb-a2",
			topology.SafeName("nvl-"+fabric("nvl-a")+"."+local("local-2")) + "(1)gb-a3,gb-a4",
			topology.SafeName("nvl-"+fabric("nvl-b")) + "(1)gb-b1,gb-b2",
		},
		nvlink: map[string]string{
			"gb-a1": fabric("nvl-a"), "gb-a2": fabric("nvl-a"), "gb-a3": fabric("nvl-a"), "gb-a4": fabric("nvl-a"),
			"gb-b1": fabric("nvl-b"), "gb-b2": fabric("nvl-b"),
		},
		requests: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns, hosts := ocitest.Split(tc.machines)
			api := ocitest.New(ocitest.Compartment, append(hosts, tc.hosts...))
			api.Key, api.PageSize = key(t), tc.pageSize
			api.Throttle(tc.throttle)
			var logs logBuffer
			s := newSource(t, testOptions(t, serve(t, api)), append(ns, tc.nodes...), &logs)

			in, err := s.Evidence(context.Background())
			if err != nil {
				t.Fatalf("Evidence: %v\nlogs:\n%s", err, logs.String())
			}
			tree, problems := topology.Build(in, topology.BuildOptions{AcceleratorDomains: tc.accel})
			if len(problems) > 0 {
				t.Errorf("build problems: %v", problems)
			}
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			nvlink := map[string]string{}
			for _, e := range in.Nodes {
				if e.Source != Name {
					t.Errorf("node %s: evidence of source %q, want %q", e.Node, e.Source, Name)
				}
				if e.NVLinkDomain != "" {
					nvlink[e.Node] = e.NVLinkDomain
				}
			}
			if diff := cmp.Diff(tc.nvlink, nvlink, cmpEmptyMap); diff != "" {
				t.Errorf("NVLink domains (-want +got):\n%s", diff)
			}
			requests := api.Requests()
			if len(requests) != tc.requests {
				t.Errorf("%d requests, want %d: %+v", len(requests), tc.requests, requests)
			}
			for _, r := range requests {
				if r.Compartment != ocitest.Compartment || r.InSubtree != "true" {
					t.Errorf("request %+v: want compartmentId %s and computeHostInSubtree=true", r, ocitest.Compartment)
				}
			}
			checkLog(t, logs.String(), "level=WARN", tc.warn)
			checkLog(t, logs.String(), "Nodes not on OCI instances", tc.info)
		})
	}
}

// cmpEmptyMap takes a nil map and an empty one for equal.
var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// checkLog checks that the log line holding marker holds every one of want, and that there is none for no want.
func checkLog(t *testing.T, logs, marker string, want []string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, marker) {
			line = l
		}
	}
	if len(want) == 0 {
		if line != "" {
			t.Errorf("unexpected log line: %s", line)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("log line with %q lacks %q:\n%s", marker, w, logs)
		}
	}
}

// TestEvidencePaging checks what the pages asked for: every page once, in order, each with the token the one
// before gave.
func TestEvidencePaging(t *testing.T) {
	noMetadata(t)
	var machines []ocitest.Machine
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		machines = append(machines, machine(n, h100, "island-1", "block-1", "local-1", ""))
	}
	ns, hosts := ocitest.Split(machines)
	api := ocitest.New(ocitest.Compartment, hosts)
	api.Key, api.PageSize = key(t), 2
	var logs logBuffer
	s := newSource(t, testOptions(t, serve(t, api)), ns, &logs)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Nodes) != 5 {
		t.Errorf("%d nodes placed, want 5", len(in.Nodes))
	}
	var pages []string
	for _, r := range api.Requests() {
		pages = append(pages, r.Page)
	}
	if len(pages) != 3 || pages[0] != "" || pages[1] == "" || pages[2] == "" || pages[1] == pages[2] {
		t.Errorf("pages asked for: %q; want the first, then two distinct tokens", pages)
	}
	checkLog(t, logs.String(), "read the compute hosts", []string{"hosts=5", "pages=3", "placed=5"})
}
