package gcptest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

var fixture = []Instance{
	{Zone: "us-central1-a", Name: "vm-0", MachineType: "a4x-highgpu-4g", Cluster: "c1", Block: "b1", Subblock: "s1", Host: "h0"},
	{Zone: "us-central1-a", Name: "vm-1", MachineType: "a4x-highgpu-4g", Cluster: "c1", Block: "b1", Subblock: "s1", Host: "h1"},
	{Zone: "us-central1-a", Name: "vm-2", MachineType: "a3-ultragpu-8g", Cluster: "c1", Block: "b2", Subblock: "s2", Host: "h2"},
	{Zone: "us-central1-a", Name: "web", MachineType: "n2-standard-8"},
	{Zone: "us-central1-b", Name: "vm-3", MachineType: "a4-highgpu-8g", Cluster: "c2", Block: "b3", Subblock: "s3", Host: "h3"},
}

// service is the real SDK's client of the stand-in, without credentials.
func service(t *testing.T, base string) *compute.Service {
	t.Helper()
	Offline(t)
	svc, err := compute.NewService(context.Background(), option.WithoutAuthentication(), option.WithEndpoint(base))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// row is what the test compares of an instance as the SDK decodes it.
type row struct{ Name, MachineType, Cluster, Block, Subblock, Host string }

// The SDK reads the stand-in's pages as Compute Engine's: every instance of the zone, with its machine type's
// URL and its physicalHostTopology, over as many pages as the page size makes.
func TestSDKPagesThroughTheInstances(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pageSize  int
		zone      string
		want      []row
		wantPages int
	}{{
		name: "one page", zone: "us-central1-a", wantPages: 1,
		want: []row{
			{"vm-0", "a4x-highgpu-4g", "c1", "b1", "s1", "h0"}, {"vm-1", "a4x-highgpu-4g", "c1", "b1", "s1", "h1"},
			{"vm-2", "a3-ultragpu-8g", "c1", "b2", "s2", "h2"}, {"web", "n2-standard-8", "", "", "", ""},
		},
	}, {
		name: "pages of three", pageSize: 3, zone: "us-central1-a", wantPages: 2,
		want: []row{
			{"vm-0", "a4x-highgpu-4g", "c1", "b1", "s1", "h0"}, {"vm-1", "a4x-highgpu-4g", "c1", "b1", "s1", "h1"},
			{"vm-2", "a3-ultragpu-8g", "c1", "b2", "s2", "h2"}, {"web", "n2-standard-8", "", "", "", ""},
		},
	}, {
		name: "pages of one, another zone", pageSize: 1, zone: "us-central1-b", wantPages: 1,
		want: []row{{"vm-3", "a4-highgpu-8g", "c2", "b3", "s3", "h3"}},
	}, {
		name: "a zone without instances", zone: "us-central1-c", wantPages: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			api := &API{Project: "p", Zones: []string{"us-central1-c"}, Instances: fixture, PageSize: tc.pageSize}
			svc := service(t, Serve(t, api))
			var got []row
			err := svc.Instances.List("p", tc.zone).Pages(context.Background(), func(l *compute.InstanceList) error {
				for _, in := range l.Items {
					r := row{Name: in.Name, MachineType: in.MachineType[strings.LastIndex(in.MachineType, "/")+1:]}
					if in.ResourceStatus != nil && in.ResourceStatus.PhysicalHostTopology != nil {
						p := in.ResourceStatus.PhysicalHostTopology
						r.Cluster, r.Block, r.Subblock, r.Host = p.Cluster, p.Block, p.Subblock, p.Host
					}
					got = append(got, r)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
			if n := len(api.Requests()); n != tc.wantPages {
				t.Errorf("%d requests, want %d: %q", n, tc.wantPages, api.Requests())
			}
		})
	}
}

// Errors reach the SDK as Google's JSON errors: a *googleapi.Error with the status and the reason.
func TestSDKReadsGoogleErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fail       func(*API)
		project    string
		zone       string
		token      string
		wantCode   int
		wantReason string
	}{
		{"rate limited", func(a *API) { a.FailNext(RateLimited) }, "p", "us-central1-a", "", 403, "rateLimitExceeded"},
		{"quota exhausted", func(a *API) { a.FailNext(Exhausted) }, "p", "us-central1-a", "", 429, "rateLimitExceeded"},
		{"always forbidden", func(a *API) { a.FailAlways(&Forbidden) }, "p", "us-central1-a", "", 403, "forbidden"},
		{"unknown project", func(*API) {}, "q", "us-central1-a", "", 404, "notFound"},
		{"unknown zone", func(*API) {}, "p", "mars-north1-a", "", 404, "notFound"},
		{"a token of another zone", func(*API) {}, "p", "us-central1-a", writeToken("us-central1-b", 1), 400, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &API{Project: "p", Instances: fixture}
			tc.fail(api)
			svc := service(t, Serve(t, api))
			c := svc.Instances.List(tc.project, tc.zone)
			if tc.token != "" {
				c = c.PageToken(tc.token)
			}
			_, err := c.Do()
			var g *googleapi.Error
			if !errors.As(err, &g) {
				t.Fatalf("err = %v, want a *googleapi.Error", err)
			}
			var reasons []string
			for _, e := range g.Errors {
				reasons = append(reasons, e.Reason)
			}
			if g.Code != tc.wantCode || !cmp.Equal(reasons, []string{tc.wantReason}) {
				t.Errorf("code %d, reasons %q; want %d, [%s] (%v)", g.Code, reasons, tc.wantCode, tc.wantReason, err)
			}
		})
	}
}
