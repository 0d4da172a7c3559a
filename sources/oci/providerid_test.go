package oci

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// TestSortNodes: the Nodes on OCI instances are told by their providerID, oci://<instance OCID>.
func TestSortNodes(t *testing.T) {
	const instance = "ocid1.instance.oc1.iad.anuwcljrx7k2qaexampleexampleexampleexampleexampleexample"
	tests := []struct {
		name      string
		nodes     []nodes.Node
		instances []string // "name=instance"
		malformed []string
		others    []string
		byScheme  string
	}{{
		name:      "an OKE node",
		nodes:     []nodes.Node{{Name: "n1", ProviderID: "oci://" + instance}},
		instances: []string{"n1=" + instance},
	}, {
		name:      "an instance OCID of a realm without a region part",
		nodes:     []nodes.Node{{Name: "n1", ProviderID: "oci://ocid1.instance.oc2..aaaa"}},
		instances: []string{"n1=ocid1.instance.oc2..aaaa"},
	}, {
		name: "other providers and none, sorted by name",
		nodes: []nodes.Node{
			{Name: "z", ProviderID: "gce://project/zone/z"},
			{Name: "a", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
			{Name: "m"},
			{Name: "k", ProviderID: "kind-node"},
		},
		others:   []string{"a (aws)", "k (providerID kind-node)", "m (no providerID)", "z (gce)"},
		byScheme: "aws: 1, gce: 1, no providerID: 1, providerID kind-node: 1",
	}, {
		name: "malformed OCI providerIDs",
		nodes: []nodes.Node{
			{Name: "b", ProviderID: "oci://"},
			{Name: "a", ProviderID: "oci://ocid1.computehost.oc1.iad.aaaa"},
			{Name: "c", ProviderID: "oci://" + instance + "/extra"},
		},
		malformed: []string{"a (providerID oci://ocid1.computehost.oc1.iad.aaaa names no instance OCID)",
			"b (providerID oci:// names no instance OCID)", "c (providerID oci://" + instance + "/extra names no instance OCID)"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := sortNodes(tc.nodes)
			var instances []string
			for _, n := range s.Ours {
				instances = append(instances, n.node.Name+"="+n.instance)
			}
			if diff := cmp.Diff(tc.instances, instances); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.malformed, s.MalformedNames(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("malformed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.others, s.OtherNames(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("others (-want +got):\n%s", diff)
			}
			if got := cloudsource.CountByScheme(s.ByScheme()); got != tc.byScheme {
				t.Errorf("by scheme %q, want %q", got, tc.byScheme)
			}
		})
	}
}
