package gcp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
)

// TestHostileAnswersRefused: an answer past a limit fails the poll (so the aggregator keeps the last good
// evidence and counts the error) with an error naming the limit and what passed it, and is not asked for
// again: a page past the body cap, an ID past the string cap (never hashed into a name), a page token that
// comes back.
func TestHostileAnswersRefused(t *testing.T) {
	huge := strings.Repeat("b", 1000)
	withBlock := slices.Clone(instances)
	withBlock[2].Block = huge
	withType := slices.Clone(instances)
	withType[0].MachineType = huge
	for _, tc := range []struct {
		name     string
		api      *gcptest.API
		err      []string
		requests int
	}{{
		name:     "a page past the body cap",
		api:      &gcptest.API{Instances: instances, Padding: cloudsource.MaxBodyBytes + 1},
		err:      []string{"gcp: the answer to GET http://127.0.0.1:", "/compute/v1/projects/fab-proj/zones/us-central1-a/instances is larger than 16 MiB: the answer is refused"},
		requests: 1,
	}, {
		name:     "a 100 MB page",
		api:      &gcptest.API{Instances: instances, Padding: 100 << 20},
		err:      []string{"is larger than 16 MiB"},
		requests: 1,
	}, {
		name: "a block ID past the string cap",
		api:  &gcptest.API{Instances: withBlock},
		err: []string{"listing the instances of project fab-proj, zone us-central1-a (page 1): gcp: physicalHostTopology.block of instance us-central1-a/a4x-r2-0 " +
			"is 1000 bytes, over the limit of 256 bytes: the answer is refused"},
		requests: 1,
	}, {
		name:     "a machine type past the string cap",
		api:      &gcptest.API{Instances: withType},
		err:      []string{"gcp: machineType of instance us-central1-a/a4x-r1-0 is 1000 bytes"},
		requests: 1,
	}, {
		name: "a page token that comes back",
		api:  &gcptest.API{Instances: instances, PageSize: 2, RepeatTokens: true},
		err: []string{"gcp: instances.list of project fab-proj, zone us-central1-a: page 2 gave the page token page 1 gave (",
			"the listing would go round: the answer is refused"},
		requests: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			api := tc.api
			api.Project = project
			s := source(t, api, []string{zoneA}, clusterNodes, nil)
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
