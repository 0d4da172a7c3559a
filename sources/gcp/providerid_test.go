package gcp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

func TestParseProviderID(t *testing.T) {
	for _, tc := range []struct {
		id       string
		provider string
		want     instanceRef
		fails    bool
	}{
		{id: "gce://my-project/us-central1-a/gke-a4x-pool-1-abcd", provider: "gce", want: instanceRef{"my-project", "us-central1-a", "gke-a4x-pool-1-abcd"}},
		{id: "gce://example.com:legacy/europe-west4-b/vm-1", provider: "gce", want: instanceRef{"example.com:legacy", "europe-west4-b", "vm-1"}},
		{id: "gce://my-project/us-central1-a", provider: "gce", fails: true},
		{id: "gce://my-project/us-central1-a/vm/extra", provider: "gce", fails: true},
		{id: "gce:///us-central1-a/vm", provider: "gce", fails: true},
		{id: "gce://my-project/us-central1-a/vm 1", provider: "gce", fails: true},
		{id: "aws:///us-east-1a/i-0123456789abcdef0", provider: "aws", fails: true},
		{id: "oci://ocid1.instance.oc1.iad.abc", provider: "oci", fails: true},
		{id: "kind://docker/kind/kind-worker", provider: "kind", fails: true},
		{id: "", provider: "no providerID", fails: true},
		{id: "my-project/us-central1-a/vm", provider: "providerID my-project/us-central1-a/vm", fails: true},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if got := cloudsource.Scheme(tc.id); got != tc.provider {
				t.Errorf("cloudsource.Scheme = %q, want %q", got, tc.provider)
			}
			got, err := parseProviderID(tc.id)
			if (err != nil) != tc.fails {
				t.Fatalf("err = %v, want failure %v", err, tc.fails)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("instance (-want +got):\n%s", diff)
			}
			if err == nil && got.String() != tc.id {
				t.Errorf("String() = %q, want %q", got.String(), tc.id)
			}
		})
	}
}
