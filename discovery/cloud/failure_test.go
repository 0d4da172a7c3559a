package cloud_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/discovery/cloud"
	"github.com/fabricmap/fabricmap/discovery/cloud/cloudtest"
)

// replaceRoot writes a fixture's root as ROOT, so that messages compare across runs.
func replaceRoot(s, root string) string { return strings.ReplaceAll(s, root, "ROOT") }

// A metadata service that takes requests and never answers fails the probe within its bound, with an error
// that names the provider, the service, the request and the bound.
func TestHangingMetadataService(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		dmi  map[string]string
		mode string
		// want are the parts the error says, in order.
		want []string
		// requests is how many requests the probe may make: each waits out the timeout.
		requests int
	}{
		{name: "aws", dmi: cloudtest.DMIAWS, want: []string{"cloud: aws metadata at URL: instance-id: no answer within 200ms"}, requests: 1},
		{name: "gcp", dmi: cloudtest.DMIGCP, want: []string{"cloud: gcp metadata at URL: instance/id: no answer within 200ms"}, requests: 1},
		{name: "oci", dmi: cloudtest.DMIOCI, want: []string{"cloud: oci metadata at URL: instance/id: no answer within 200ms"}, requests: 1},
		{name: "each in turn", dmi: cloudtest.DMIOnPrem, mode: cloud.ModeOn, requests: 3, want: []string{
			"cloud: DMI names no known cloud and no provider's metadata service answered: ",
			"aws metadata at URL: instance-id: no answer within 200ms", "; gcp metadata at URL: instance/id: no answer within 200ms",
			"; oci metadata at URL: instance/id: no answer within 200ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := cloudtest.NewHanging(t)
			p, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, tc.dmi), Mode: tc.mode, Endpoint: srv.URL, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := p.Run(context.Background())
			took := time.Since(start)
			if err == nil {
				t.Fatalf("Run = %+v, want an error", res)
			}
			msg := strings.ReplaceAll(err.Error(), srv.URL, "URL")
			at := 0
			for _, part := range tc.want {
				i := strings.Index(msg[at:], part)
				if i < 0 {
					t.Fatalf("error %q does not say %q (after offset %d)", msg, part, at)
				}
				at += i + len(part)
			}
			if limit := time.Duration(tc.requests)*timeout + time.Second; took > limit {
				t.Errorf("Run took %s, want at most %s", took, limit)
			}
			if res.Cloud != nil {
				t.Errorf("a failed run reported %+v", res.Cloud)
			}
		})
	}
}

// The EC2 stand-in refuses a GET without IMDSv2's token; the probe asks for a token once and keeps it from run
// to run.
func TestAWSTokenFlow(t *testing.T) {
	srv := cloudtest.NewAWS(t, cloudtest.AWS{InstanceID: ec2ID, AvailabilityZone: "us-east-1a"})
	resp, err := http.Get(srv.URL + "/latest/meta-data/instance-id")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a GET without a token got %s, want 401", resp.Status)
	}
	p, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, cloudtest.DMIAWS), Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if res, err := p.Run(context.Background()); err != nil || res.Cloud == nil || res.Cloud.InstanceID != ec2ID {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	}
	want := append([]string{"GET /latest/meta-data/instance-id"}, awsRequests...)
	want = append(want, awsRequests[1:]...)
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A service that gives no IMDSv2 token fails the probe: it never falls back to IMDSv1's unauthenticated GETs.
func TestAWSNeverFallsBackToIMDSv1(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			_, _ = w.Write([]byte(ec2ID))
			return
		}
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	p, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, cloudtest.DMIAWS), Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "failed to get API token") {
		t.Errorf("Run = %+v, %v; want the token's failure", res, err)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("the probe made %d GETs without a token", n)
	}
}

// Answers that are not the provider's fail the probe with the reason.
func TestUnexpectedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dmi     map[string]string
		handler http.HandlerFunc
		want    string
	}{{
		name: "gcp: an answer without Metadata-Flavor",
		dmi:  cloudtest.DMIGCP,
		handler: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(gceID))
		},
		want: "cloud: gcp metadata at URL: instance/id: the answer lacks Metadata-Flavor: Google: not Compute Engine's metadata server",
	}, {
		name:    "oci: an empty instance ID",
		dmi:     cloudtest.DMIOCI,
		handler: func(http.ResponseWriter, *http.Request) {},
		want:    "cloud: oci metadata at URL: instance/id: empty answer",
	}, {
		name: "oci: an instance ID past the report's bound",
		dmi:  cloudtest.DMIOCI,
		handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/opc/v2/instance/id" {
				_, _ = w.Write([]byte(strings.Repeat("o", 256)))
				return
			}
			http.NotFound(w, r)
		},
		want: "cloud: oci metadata at URL: an instance ID of 256 characters is past the report's bound of 255",
	}, {
		name: "oci: an answer past 64 KiB",
		dmi:  cloudtest.DMIOCI,
		handler: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("o", 64<<10+1)))
		},
		want: "cloud: oci metadata at URL: instance/id: the answer is longer than 64 KiB",
	}, {
		name: "oci: refused",
		dmi:  cloudtest.DMIOCI,
		handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		},
		want: "cloud: oci metadata at URL: instance/id: HTTP 401 Unauthorized",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			p, err := cloud.New(cloud.Options{SysfsRoot: cloudtest.SysfsWithDMI(t, tc.dmi), Endpoint: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(context.Background())
			if err == nil {
				t.Fatalf("Run = %+v, want an error", res)
			}
			if got := strings.ReplaceAll(err.Error(), srv.URL, "URL"); got != tc.want {
				t.Errorf("error\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
