package awstest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
)

// client returns the SDK's EC2 client of the stand-in at url, with static credentials and no retries; IMDS
// and the machine's AWS settings stay out of it.
func client(t *testing.T, url string) *ec2.Client {
	t.Helper()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "AWS_PROFILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return ec2.New(ec2.Options{Region: Region, BaseEndpoint: awssdk.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "stand-in-secret", "")})
}

// TestStandInPagesAsEC2: the SDK's paginator reads every instance of the fixture through the stand-in, by
// instance ID and by MaxResults, and decodes them as served.
func TestStandInPagesAsEC2(t *testing.T) {
	fixture := Instances(Fixture())
	e := New(fixture...)
	e.SetPageSize(3)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	c := client(t, srv.URL)
	for _, tc := range []struct {
		name  string
		input ec2.DescribeInstanceTopologyInput
		pages int
	}{
		{name: "by instance ID", input: ec2.DescribeInstanceTopologyInput{InstanceIds: []string{fixture[0].ID, fixture[7].ID, fixture[13].ID, "i-0123456789abcdef0"}}, pages: 1},
		{name: "all, 5 a page", input: ec2.DescribeInstanceTopologyInput{MaxResults: awssdk.Int32(5)}, pages: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Instance
			pages := 0
			for p := ec2.NewDescribeInstanceTopologyPaginator(c, &tc.input); p.HasMorePages(); pages++ {
				out, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range out.Instances {
					got = append(got, Instance{ID: *i.InstanceId, Type: *i.InstanceType, Zone: *i.AvailabilityZone, ZoneID: *i.ZoneId,
						CapacityBlock: awssdk.ToString(i.CapacityBlockId), NetworkNodes: i.NetworkNodes})
				}
			}
			want := fixture
			if ids := tc.input.InstanceIds; ids != nil {
				want = []Instance{fixture[0], fixture[7], fixture[13]}
			}
			if diff := cmp.Diff(want, got, cmp.Transformer("nil", func(s []string) []string {
				if len(s) == 0 {
					return nil
				}
				return s
			})); diff != "" {
				t.Errorf("instances (-served +read):\n%s", diff)
			}
			if pages != tc.pages {
				t.Errorf("%d pages, want %d", pages, tc.pages)
			}
		})
	}
}

// TestStandInErrorsAsEC2: the SDK reads the stand-in's errors as EC2's, by code.
func TestStandInErrorsAsEC2(t *testing.T) {
	e := New(Instances(Fixture())...)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	c := client(t, srv.URL)
	code := func(setup func(), in *ec2.DescribeInstanceTopologyInput) string {
		setup()
		_, err := c.DescribeInstanceTopology(context.Background(), in)
		var api smithy.APIError
		if !errors.As(err, &api) {
			t.Fatalf("error %v, want an API error", err)
		}
		return api.ErrorCode() + ": " + api.ErrorMessage()
	}
	ids := &ec2.DescribeInstanceTopologyInput{InstanceIds: []string{"i-0000000000000a001", "i-0123456789abcdef0"}}
	got := []string{
		code(func() { e.Throttle(1) }, ids),
		code(func() { e.Fail("UnauthorizedOperation", http.StatusForbidden) }, ids),
		code(func() { e.Fail("", 0); e.RejectUnknownIDs(true) }, ids),
		code(func() {}, &ec2.DescribeInstanceTopologyInput{InstanceIds: ids.InstanceIds, MaxResults: awssdk.Int32(5)}),
		code(func() {}, &ec2.DescribeInstanceTopologyInput{NextToken: awssdk.String("bogus")}),
	}
	want := []string{
		"RequestLimitExceeded: Request limit exceeded.",
		"UnauthorizedOperation: the stand-in fails this call",
		"InvalidInstanceID.NotFound: The instance IDs 'i-0123456789abcdef0' do not exist",
		"InvalidParameterCombination: MaxResults cannot be specified with InstanceIds",
		"InvalidParameterValue: invalid NextToken bogus",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestStandInRefusesOtherCalls: another action, a GET or an unsigned call is refused with EC2's error XML.
func TestStandInRefusesOtherCalls(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	post := func(form url.Values, signed bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if signed {
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=00")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		form   url.Values
		signed bool
		status int
		code   string
	}{
		{url.Values{"Action": {"DescribeInstances"}, "Version": {Version}}, true, 400, "<Code>InvalidAction</Code>"},
		{url.Values{"Action": {"DescribeInstanceTopology"}, "Version": {"2014-01-01"}}, true, 400, "<Code>InvalidAction</Code>"},
		{url.Values{"Action": {"DescribeInstanceTopology"}, "Version": {Version}}, false, 401, "<Code>AuthFailure</Code>"},
		{url.Values{"Action": {"DescribeInstanceTopology"}, "Version": {Version}}, true, 200, "<DescribeInstanceTopologyResponse"},
	} {
		status, body := post(tc.form, tc.signed)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%v (signed %v): %d %s, want %d with %s", tc.form, tc.signed, status, body, tc.status, tc.code)
		}
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
}
