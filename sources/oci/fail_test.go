package oci

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
)

// TestEvidenceFails: what fails a poll, so that the aggregator keeps the last good evidence, and how many
// requests it took: retried errors cloudsource.DefaultMaxAttempts times, the others once.
func TestEvidenceFails(t *testing.T) {
	noMetadata(t)
	otherKey, err := ocitest.NewKey("us-ashburn-1")
	if err != nil {
		t.Fatal(err)
	}
	placed := []nodes.Node{machine("h100-1", h100, "island-1", "block-1", "local-1", "").Node}
	tests := []struct {
		name     string
		setup    func(api *ocitest.API, opts *Options)
		nodes    []nodes.Node
		list     error
		requests int
		want     []string // in the error
	}{{
		name: "a server error is retried, then fails the poll",
		setup: func(api *ocitest.API, _ *Options) {
			api.Fail(100, http.StatusInternalServerError, "InternalServerError")
		},
		requests: cloudsource.DefaultMaxAttempts,
		want:     []string{"ListComputeHosts in compartment " + ocitest.Compartment, "page 1", "InternalServerError"},
	}, {
		name:     "throttling past the attempts fails the poll",
		setup:    func(api *ocitest.API, _ *Options) { api.Throttle(100) },
		requests: cloudsource.DefaultMaxAttempts,
		want:     []string{"ListComputeHosts", "TooManyRequests"},
	}, {
		name:     "attempts are the setting's",
		setup:    func(api *ocitest.API, o *Options) { api.Throttle(100); o.MaxAttempts = 2 },
		requests: 2,
		want:     []string{"TooManyRequests"},
	}, {
		name: "a compartment the API does not know is not retried",
		setup: func(_ *ocitest.API, o *Options) {
			o.Compartment = "ocid1.compartment.oc1..aaaaaaaaotherotherotherotherotherotherotherotherotherother"
		},
		requests: 1,
		want:     []string{"NotAuthorizedOrNotFound"},
	}, {
		name:     "a key the API does not know is not retried",
		setup:    func(_ *ocitest.API, o *Options) { o.Credentials = otherKey.Provider() },
		requests: 1,
		want:     []string{"NotAuthenticated"},
	}, {
		name: "no Node on an OCI instance, without asking OCI",
		nodes: []nodes.Node{
			{Name: "aws-1", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
			{Name: "aws-2", ProviderID: "aws:///us-east-1a/i-0123456789abcdef1"},
			{Name: "gce-1", ProviderID: "gce://project/us-central1-a/gce-1"},
			{Name: "control-plane"},
		},
		want: []string{"no Node runs on an OCI instance", "aws: 2, gce: 1, no providerID: 1"},
	}, {
		name:  "only malformed OCI providerIDs",
		nodes: []nodes.Node{{Name: "bad-1", ProviderID: "oci://bad"}},
		want:  []string{"malformed", "bad-1 (providerID oci://bad names no instance OCID)"},
	}, {
		name:     "no Node placed",
		nodes:    []nodes.Node{machine("vm-1", vm, "", "", "", "").Node, ociNode("gone-1")},
		requests: 1,
		want:     []string{"none of the 2 Nodes on OCI instances is placed by the 2 compute hosts"},
	}, {
		name: "listing the Nodes fails",
		list: errors.New("the API server is down"),
		want: []string{"listing Nodes: the API server is down"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.nodes
			if ns == nil {
				ns = placed
			}
			var hosts []ocitest.Host
			for _, n := range []string{"h100-1", "vm-1"} {
				hosts = append(hosts, machine(n, h100, "island-1", "block-1", "local-1", "").Host)
			}
			hosts[1].HPCIsland, hosts[1].NetworkBlock, hosts[1].LocalBlock = "", "", ""
			api := ocitest.New(ocitest.Compartment, hosts)
			api.Key = key(t)
			opts := testOptions(t, serve(t, api))
			if tc.setup != nil {
				tc.setup(api, &opts)
			}
			var logs logBuffer
			s := newSource(t, opts, ns, &logs)
			if tc.list != nil {
				s.Nodes = func(context.Context) ([]nodes.Node, error) { return nil, tc.list }
			}
			in, err := s.Evidence(context.Background())
			if err == nil {
				t.Fatalf("Evidence gave %d nodes and no error", len(in.Nodes))
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if got := len(api.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

// TestEvidenceRefusesEndlessPages: an API whose next page is one already read fails the poll rather than
// looping until the deadline.
func TestEvidenceRefusesEndlessPages(t *testing.T) {
	noMetadata(t)
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("opc-next-page", "again")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[]}`))
	}))
	defer srv.Close()
	var logs logBuffer
	s := newSource(t, testOptions(t, srv.URL), []nodes.Node{ociNode("n1")}, &logs)
	_, err := s.Evidence(context.Background())
	if err == nil || !strings.Contains(err.Error(), "page 2 gave the page token page 1 gave") {
		t.Fatalf("want an error about a page already read, got %v", err)
	}
	if requests != 2 {
		t.Errorf("%d requests, want 2", requests)
	}
}
