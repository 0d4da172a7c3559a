package aws

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/nodes"
)

func TestSortNodes(t *testing.T) {
	ns := []nodes.Node{
		{Name: "b", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
		{Name: "a", ProviderID: "aws:////i-01234567"},
		{Name: "gce", ProviderID: "gce://project/us-central1-a/gce"},
		{Name: "oci", ProviderID: "oci://ocid1.instance.oc1.iad.abc"},
		{Name: "bare"},
		{Name: "fargate", ProviderID: "aws:///us-east-1a/0a1b2c3d4e-5f6a7b8c9d/fargate-ip-10-0-0-1"},
		{Name: "upper", ProviderID: "aws:///us-east-1a/i-0123456789ABCDEF0"},
		{Name: "short", ProviderID: "aws:///us-east-1a/i-0123"},
		{Name: "odd", ProviderID: "kind-node"},
	}
	got := sortNodes(ns)
	var instances []string
	for _, n := range got.instances {
		instances = append(instances, n.node.Name+" "+n.zone+" "+n.instance)
	}
	if diff := cmp.Diff([]string{"a  i-01234567", "b us-east-1a i-0123456789abcdef0"}, instances); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
	want := []string{
		"fargate (providerID aws:///us-east-1a/0a1b2c3d4e-5f6a7b8c9d/fargate-ip-10-0-0-1 names no EC2 instance)",
		"short (providerID aws:///us-east-1a/i-0123 names no EC2 instance)",
		"upper (providerID aws:///us-east-1a/i-0123456789ABCDEF0 names no EC2 instance)",
	}
	if diff := cmp.Diff(want, got.notInstances); diff != "" {
		t.Errorf("AWS Nodes without an instance (-want +got):\n%s", diff)
	}
	want = []string{"bare (no providerID)", "gce (gce)", "oci (oci)", "odd (providerID kind-node)"}
	if diff := cmp.Diff(want, got.others); diff != "" {
		t.Errorf("other Nodes (-want +got):\n%s", diff)
	}
}

func TestNodesRegion(t *testing.T) {
	node := func(name, zone, region string) instanceNode {
		n := instanceNode{node: nodes.Node{Name: name, ProviderID: "aws:///" + zone + "/i-01234567"}, zone: zone, instance: "i-01234567"}
		if region != "" {
			n.node.Labels = map[string]string{RegionLabel: region}
		}
		return n
	}
	tests := []struct {
		name   string
		nodes  []instanceNode
		region string
		err    string // a part of the error
	}{
		{name: "the region label", nodes: []instanceNode{node("a", "", "eu-west-1"), node("b", "", "eu-west-1")}, region: "eu-west-1"},
		{name: "the label before the zone", nodes: []instanceNode{node("a", "us-east-1a", "us-east-1"), node("b", "us-east-1b", "")}, region: "us-east-1"},
		{name: "an Availability Zone", nodes: []instanceNode{node("a", "ap-southeast-2c", "")}, region: "ap-southeast-2"},
		{name: "a Local Zone", nodes: []instanceNode{node("a", "us-east-1-dfw-2a", ""), node("b", "us-east-1a", "")}, region: "us-east-1"},
		{name: "GovCloud", nodes: []instanceNode{node("a", "us-gov-west-1a", "")}, region: "us-gov-west-1"},
		{name: "a Wavelength Zone", nodes: []instanceNode{node("a", "us-east-1-wl1-bos-wlz-1", "")}, region: "us-east-1"},
		{name: "two regions", nodes: []instanceNode{node("a", "us-east-1a", ""), node("b", "", "us-west-2")},
			err: "the Nodes are in several regions (a: us-east-1, b: us-west-2): give --aws-region"},
		{name: "no region to tell", nodes: []instanceNode{node("a", "us-east-1a", ""), node("b", "", "")},
			err: `the region of Node b cannot be told (no topology.kubernetes.io/region label, no zone in providerID "aws:////i-01234567"): give --aws-region`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			region, err := nodesRegion(tc.nodes)
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			if region != tc.region {
				t.Errorf("region %q, want %q", region, tc.region)
			}
		})
	}
}
