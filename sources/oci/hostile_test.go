package oci

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
)

// TestHostileAnswersRefused: an answer past a limit fails the poll (so the aggregator keeps the last good
// evidence and counts the error) with an error naming the limit and what passed it, and is not asked for
// again: a page past the body cap, an OCID past the string cap (never hashed into a name), a next page that
// is one already read.
func TestHostileAnswersRefused(t *testing.T) {
	noMetadata(t)
	huge := strings.Repeat("a", 1000)
	fixture := ocitest.Fixture()
	for _, tc := range []struct {
		name     string
		setup    func(*ocitest.API, []ocitest.Host)
		err      []string
		requests int
	}{{
		name:     "a page past the body cap",
		setup:    func(api *ocitest.API, _ []ocitest.Host) { api.Padding = cloudsource.MaxBodyBytes + 1 },
		err:      []string{"oci: the answer to GET http://127.0.0.1:", ocitest.Path + " is larger than 16 MiB: the answer is refused"},
		requests: 1,
	}, {
		name:     "a 100 MB page",
		setup:    func(api *ocitest.API, _ []ocitest.Host) { api.Padding = 100 << 20 },
		err:      []string{"is larger than 16 MiB"},
		requests: 1,
	}, {
		name: "a local block OCID past the string cap",
		setup: func(api *ocitest.API, hosts []ocitest.Host) {
			hosts[1].LocalBlock = huge
			api.SetHosts(hosts)
		},
		err: []string{"OCI ListComputeHosts in compartment " + ocitest.Compartment + " at http://127.0.0.1:",
			", page 1: oci: localBlockId of compute host " + fixture[1].Host.ID + " is 1000 bytes, over the limit of 256 bytes: the answer is refused"},
		requests: 1,
	}, {
		name: "an instance OCID past the string cap",
		setup: func(api *ocitest.API, hosts []ocitest.Host) {
			hosts[0].InstanceID = huge
			api.SetHosts(hosts)
		},
		err:      []string{"oci: instanceId of compute host", "is 1000 bytes"},
		requests: 1,
	}, {
		name:  "a next page already read",
		setup: func(api *ocitest.API, _ []ocitest.Host) { api.PageSize = 2; api.RepeatTokens = true },
		err: []string{"OCI ListComputeHosts in compartment " + ocitest.Compartment + " at http://127.0.0.1:",
			": page 2 gave the page token page 1 gave (", "the listing would go round: the answer is refused"},
		requests: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ns, hosts := ocitest.Split(fixture)
			api := ocitest.New(ocitest.Compartment, hosts)
			tc.setup(api, hosts)
			var logs logBuffer
			s := newSource(t, testOptions(t, serve(t, api)), ns, &logs)
			_, err := s.Evidence(context.Background())
			if err == nil {
				t.Fatal("the poll succeeded, want the answer refused")
			}
			for _, want := range tc.err {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one with %q", err, want)
				}
			}
			if !errors.Is(err, cloudsource.ErrRefused) {
				t.Errorf("error %v is no cloudsource.ErrRefused", err)
			}
			if n := len(api.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d (a refused answer is not asked for again)", n, tc.requests)
			}
		})
	}
}
