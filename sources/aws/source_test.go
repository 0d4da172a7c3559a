package aws

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/aws/awstest"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// fixtureTree is the tree of awstest.Fixture with --accelerator-domains: the network nodes are the tiers, the
// p6e-gb200 capacity blocks the NVLink domains below their leaf, the trn2u block none; nn-t3 and nn-m5, above
// one domain each, are dropped as topology.Build drops such tops; cpu-1 (m5.large) is left out.
var fixtureTree = []string{
	"fabric(5)nn-b4,nn-t1,nn-t2",
	"nn-b1(2)p5-1,p5-2", "nn-b2(2)p5-3", "nn-b3(2)p5-4",
	"nn-b4(3)nn-x1,nn-x2",
	"nn-b5(2)nvl-" + awstest.BlockGB200A + ",nvl-" + awstest.BlockGB200B,
	"nn-b6(2)trn-1,trn-2",
	"nn-m1(3)nn-b1,nn-b2", "nn-m2(3)nn-b3", "nn-m3(3)nn-b5", "nn-m4(3)nn-b6",
	"nn-t1(4)nn-m1,nn-m2", "nn-t2(4)nn-m3,nn-m4",
	"nn-x1(2)b200-1,b200-2", "nn-x2(2)b200-3",
	"nvl-" + awstest.BlockGB200A + "(1)gb-1,gb-2",
	"nvl-" + awstest.BlockGB200B + "(1)gb-3,gb-4",
}

// fixtureNVLink are the NVLink domains of awstest.Fixture: the p6e-gb200 instances' capacity blocks.
var fixtureNVLink = map[string]string{
	"gb-1": awstest.BlockGB200A, "gb-2": awstest.BlockGB200A, "gb-3": awstest.BlockGB200B, "gb-4": awstest.BlockGB200B,
}

// extraNodes are Nodes beside the fixture's: another provider's, one without providerID, a Fargate one and
// one whose instance EC2 does not describe.
var extraNodes = []nodes.Node{
	{Name: "gce-1", ProviderID: "gce://project/us-central1-a/gce-1"},
	{Name: "control-plane"},
	{Name: "fargate-ip-10-0-0-1", ProviderID: "aws:///us-east-1a/0a1b2c3d4e-5f6a7b8c9d/fargate-ip-10-0-0-1"},
	{Name: "gone-1", ProviderID: "aws:///us-east-1a/i-0000000000000f001", Labels: map[string]string{RegionLabel: awstest.Region}},
}

// leftOutOfFixture is what the warning lists of the fixture and extraNodes.
var leftOutOfFixture = []string{
	"cpu-1 (instance i-0000000000000e001 (m5.large) has no network node: a type without topology, or not running)",
	"fargate-ip-10-0-0-1 (providerID aws:///us-east-1a/0a1b2c3d4e-5f6a7b8c9d/fargate-ip-10-0-0-1 names no EC2 instance)",
	"gone-1 (instance i-0000000000000f001 not in the answer)",
}

// withoutLabels returns the Nodes without their labels.
func withoutLabels(ns []nodes.Node) []nodes.Node {
	out := slices.Clone(ns)
	for i := range out {
		out[i].Labels = nil
	}
	return out
}

// TestEvidenceFromTheStandIn runs the source, the real SDK, against the stand-in: several instance families,
// Nodes of other providers and instances missing from the answer, paging, throttling and the region's sources.
func TestEvidenceFromTheStandIn(t *testing.T) {
	fixture := awstest.Fixture()
	all := slices.Concat(awstest.Nodes(fixture), extraNodes)
	idsAsked := len(fixture) + 1 // gone-1's too
	tests := []struct {
		name     string
		nodes    []nodes.Node
		setup    func(*awstest.EC2)
		opts     func(*Options)
		tree     []string          // nil: not compared
		nvlink   map[string]string // NVLink domains by node
		leftOut  []string          // the warning's names
		requests func(t *testing.T, rs []awstest.Request)
	}{{
		name:  "several families, other providers, missing instances",
		nodes: all, tree: fixtureTree, nvlink: fixtureNVLink, leftOut: leftOutOfFixture,
		requests: func(t *testing.T, rs []awstest.Request) {
			if len(rs) != 1 || len(rs[0].InstanceIDs) != idsAsked || rs[0].MaxResults != "" || rs[0].Region != awstest.Region {
				t.Errorf("requests %+v, want one for %d instances, without MaxResults, signed for %s", rs, idsAsked, awstest.Region)
			}
		},
	}, {
		name:  "paging across several pages",
		nodes: all, setup: func(e *awstest.EC2) { e.SetPageSize(4) },
		tree: fixtureTree, nvlink: fixtureNVLink, leftOut: leftOutOfFixture,
		requests: func(t *testing.T, rs []awstest.Request) {
			var tokens []string
			for _, r := range rs {
				tokens = append(tokens, r.NextToken)
				if len(r.InstanceIDs) != idsAsked {
					t.Errorf("a page asked for %d instances, want all %d", len(r.InstanceIDs), idsAsked)
				}
			}
			if diff := cmp.Diff([]string{"", "page-4", "page-8", "page-12"}, tokens); diff != "" {
				t.Errorf("NextToken of each request (-want +got):\n%s", diff)
			}
		},
	}, {
		name:  "throttled twice, then answered",
		nodes: all, setup: func(e *awstest.EC2) { e.Throttle(2) },
		tree: fixtureTree, nvlink: fixtureNVLink, leftOut: leftOutOfFixture,
		requests: func(t *testing.T, rs []awstest.Request) {
			if len(rs) != 3 {
				t.Errorf("%d requests, want 3 (two throttled)", len(rs))
			}
		},
	}, {
		name:  "an instance EC2 does not know is asked without",
		nodes: all, setup: func(e *awstest.EC2) { e.RejectUnknownIDs(true) },
		tree: fixtureTree, nvlink: fixtureNVLink,
		leftOut: []string{leftOutOfFixture[0], leftOutOfFixture[1], "gone-1 (EC2 does not know instance i-0000000000000f001)"},
		requests: func(t *testing.T, rs []awstest.Request) {
			if len(rs) != 2 || len(rs[1].InstanceIDs) != idsAsked-1 || slices.Contains(rs[1].InstanceIDs, "i-0000000000000f001") {
				t.Errorf("requests %+v, want a second one without i-0000000000000f001", rs)
			}
		},
	}, {
		name:  "region from the zones in providerID",
		nodes: withoutLabels(awstest.Nodes(fixture)), tree: fixtureTree, nvlink: fixtureNVLink, leftOut: leftOutOfFixture[:1],
		requests: func(t *testing.T, rs []awstest.Request) {
			if len(rs) != 1 || rs[0].Region != "us-east-1" {
				t.Errorf("requests %+v, want one signed for us-east-1 (us-east-1a, us-east-1-dfw-2a)", rs)
			}
		},
	}, {
		name:  "region from --aws-region",
		nodes: awstest.Nodes(fixture), opts: func(o *Options) { o.Region = "us-west-2" },
		tree: fixtureTree, nvlink: fixtureNVLink, leftOut: leftOutOfFixture[:1],
		requests: func(t *testing.T, rs []awstest.Request) {
			if len(rs) != 1 || rs[0].Region != "us-west-2" {
				t.Errorf("requests %+v, want one signed for us-west-2", rs)
			}
		},
	}, {
		name:  "an UltraServer instance without its capacity block yet",
		nodes: awstest.Nodes(fixture),
		setup: func(e *awstest.EC2) {
			instances := awstest.Instances(fixture)
			for i := range instances {
				if instances[i].ID == "i-0000000000000c004" { // gb-4
					instances[i].CapacityBlock = ""
				}
			}
			e.SetInstances(instances...)
		},
		nvlink:  map[string]string{"gb-1": awstest.BlockGB200A, "gb-2": awstest.BlockGB200A, "gb-3": awstest.BlockGB200B},
		leftOut: leftOutOfFixture[:1],
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, url := standIn(t, awstest.Instances(fixture)...)
			if tc.setup != nil {
				tc.setup(e)
			}
			s, logs := newSource(t, url, tc.nodes, tc.opts)
			in, err := s.Evidence(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tc.tree != nil {
				tree, problems := topology.Build(in, topology.BuildOptions{AcceleratorDomains: true})
				if len(problems) > 0 {
					t.Errorf("build problems: %v", problems)
				}
				if err := tree.Validate(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.tree, tree.Outline()); diff != "" {
					t.Errorf("tree (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.nvlink, nvlink(in)); diff != "" {
				t.Errorf("NVLink domains (-want +got):\n%s", diff)
			}
			var warned []string
			for _, l := range logLines(t, logs) {
				if l.Level == "WARN" {
					warned = append(warned, l.First...)
				}
			}
			if diff := cmp.Diff(tc.leftOut, warned); diff != "" {
				t.Errorf("Nodes warned about (-want +got):\n%s", diff)
			}
			if tc.requests != nil {
				tc.requests(t, e.Requests())
			}
		})
	}
}

// TestEvidenceAsksAtMost100InstancesACall: 250 Nodes are asked in three calls of 100, 100 and 50 instances,
// each read to its last page, and all are placed.
func TestEvidenceAsksAtMost100InstancesACall(t *testing.T) {
	var instances []awstest.Instance
	var ns []nodes.Node
	for i := range 250 {
		inst := awstest.Instance{ID: fmt.Sprintf("i-%017x", 0xa000+i), Type: "p5.48xlarge", Zone: "us-east-2b", ZoneID: "use2-az2",
			NetworkNodes: []string{"nn-t1", fmt.Sprintf("nn-m%d", i%3), fmt.Sprintf("nn-b%d", i%12)}}
		instances = append(instances, inst)
		ns = append(ns, nodes.Node{Name: fmt.Sprintf("node-%03d", i), ProviderID: inst.ProviderID()})
	}
	e, url := standIn(t, instances...)
	s, _ := newSource(t, url, ns, nil)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Nodes) != 250 {
		t.Errorf("%d nodes placed, want 250", len(in.Nodes))
	}
	var calls []int
	asked := map[string]bool{}
	for _, r := range e.Requests() {
		if r.NextToken == "" {
			calls = append(calls, len(r.InstanceIDs))
		}
		for _, id := range r.InstanceIDs {
			asked[id] = true
		}
		if r.Region != "us-east-2" {
			t.Errorf("a request signed for %q, want us-east-2", r.Region)
		}
	}
	if diff := cmp.Diff([]int{100, 100, 50}, calls); diff != "" {
		t.Errorf("instances a call (-want +got):\n%s", diff)
	}
	if len(asked) != 250 || len(e.Requests()) != 5+5+3 {
		t.Errorf("%d instances asked in %d requests, want 250 in 13 (20 a page)", len(asked), len(e.Requests()))
	}
}

// TestEvidenceFails: an EC2 error (after bounded retries, and none for rejected credentials), no Node on
// EC2, an answer that places no Node and Nodes of several regions each fail the poll, saying why.
func TestEvidenceFails(t *testing.T) {
	fixture := awstest.Fixture()
	tests := []struct {
		name     string
		nodes    []nodes.Node
		list     nodes.Lister // instead of nodes
		setup    func(*awstest.EC2)
		err      string // a part of the error
		requests int
	}{{
		name: "throttled past the retries", nodes: awstest.Nodes(fixture), setup: func(e *awstest.EC2) { e.Throttle(100) },
		err: "AWS source: EC2 in us-east-1: DescribeInstanceTopology of 14 instances (i-0000000000000a001…), page 1: ", requests: 3,
	}, {
		name: "throttling is named", nodes: awstest.Nodes(fixture), setup: func(e *awstest.EC2) { e.Throttle(100) },
		err: "RequestLimitExceeded", requests: 3,
	}, {
		name: "rejected credentials are not retried", nodes: awstest.Nodes(fixture), setup: func(e *awstest.EC2) { e.Fail("UnauthorizedOperation", 403) },
		err: "api error UnauthorizedOperation", requests: 1,
	}, {
		name: "server errors are retried, then fail", nodes: awstest.Nodes(fixture), setup: func(e *awstest.EC2) { e.Fail("InternalError", 500) },
		err: "api error InternalError", requests: 3,
	}, {
		name: "no Node on EC2", nodes: extraNodes[:3],
		err: "AWS source: nothing usable: none of the 3 Nodes runs on an EC2 instance (spec.providerID aws:///<zone>/i-…); first: fargate-ip-10-0-0-1 (providerID",
	}, {
		name: "no Node EC2 places", nodes: awstest.Nodes(fixture[len(fixture)-1:]),
		err: "AWS source: nothing usable: EC2 in us-east-1 places none of the 1 Nodes on EC2 instances (first: cpu-1 (instance", requests: 1,
	}, {
		name: "Nodes in two regions", nodes: append(awstest.Nodes(fixture[:1]), nodes.Node{Name: "west-1", ProviderID: "aws:///us-west-2a/i-0000000000000a0ff"}),
		err: "AWS source: the Nodes are in several regions (p5-1: us-east-1, west-1: us-west-2): give --aws-region",
	}, {
		name: "listing Nodes fails", list: func(context.Context) ([]nodes.Node, error) { return nil, errors.New("apiserver down") },
		err: "AWS source: listing Nodes: apiserver down",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, url := standIn(t, awstest.Instances(fixture)...)
			if tc.setup != nil {
				tc.setup(e)
			}
			s, _ := newSource(t, url, tc.nodes, func(o *Options) { o.MaxAttempts = 3 })
			if tc.list != nil {
				s.Nodes = tc.list
			}
			_, err := s.Evidence(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			if n := len(e.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// TestLogsWhenTheListChanges: the Nodes left out are logged when they change, not at every poll.
func TestLogsWhenTheListChanges(t *testing.T) {
	fixture := awstest.Fixture()
	ns := slices.Concat(awstest.Nodes(fixture), extraNodes)
	_, url := standIn(t, awstest.Instances(fixture)...)
	s, logs := newSource(t, url, ns, nil)
	var counts []int
	for _, listed := range [][]nodes.Node{ns, ns, ns[:len(ns)-1], ns[:len(ns)-1]} {
		s.Nodes = list(listed)
		if _, err := s.Evidence(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range logLines(t, logs) {
		if l.Level == "WARN" {
			counts = append(counts, l.Count)
		}
	}
	if diff := cmp.Diff([]int{3, 2}, counts); diff != "" {
		t.Errorf("counts of the warnings logged (-want +got):\n%s", diff)
	}
}

// TestMergeBelowReports: the AWS evidence places only the Nodes the reports do not place.
func TestMergeBelowReports(t *testing.T) {
	fixture := awstest.Fixture()
	_, url := standIn(t, awstest.Instances(fixture)...)
	s, _ := newSource(t, url, awstest.Nodes(fixture), nil)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reports := topology.Input{Nodes: []topology.NodeEvidence{{Node: "p5-1", Source: "reports", SelfReported: true,
		Links: []topology.SwitchLink{{SwitchID: "mac:aa", SwitchName: "leaf-a"}}}}}
	merged, conflicts := s.Merge(reports, in)
	if diff := cmp.Diff([]topology.Conflict{{Node: "p5-1", Kept: "reports", Dropped: Name}}, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	bySource := map[string]int{}
	for _, n := range merged.Nodes {
		bySource[n.Source]++
	}
	if diff := cmp.Diff(map[string]int{"reports": 1, Name: 12}, bySource); diff != "" {
		t.Errorf("nodes by source (-want +got):\n%s", diff)
	}
}

// TestRetriesStayBounded: AWS_MAX_ATTEMPTS does not lift the source's bound on attempts.
func TestRetriesStayBounded(t *testing.T) {
	fixture := awstest.Fixture()
	e, url := standIn(t, awstest.Instances(fixture)...)
	e.Throttle(100)
	s, _ := newSource(t, url, awstest.Nodes(fixture), func(o *Options) {
		o.MaxAttempts = 2
		t.Setenv("AWS_MAX_ATTEMPTS", "10") // after newSource's isolate, before the configuration is loaded
	})
	if _, err := s.Evidence(context.Background()); err == nil {
		t.Fatal("a throttled poll succeeded")
	}
	if n := len(e.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
