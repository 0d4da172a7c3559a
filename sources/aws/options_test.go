package aws

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		args []string
		want Options
	}{
		{args: nil, want: Options{Poll: cloudsource.Poll{Interval: cloudsource.DefaultInterval, PollTimeout: cloudsource.DefaultPollTimeout}}},
		{args: []string{"--from-aws", "--aws-region=eu-north-1", "--aws-endpoint=http://127.0.0.1:4566", "--aws-interval=30m", "--aws-poll-timeout=1m"},
			want: Options{Enabled: true, Region: "eu-north-1", Endpoint: "http://127.0.0.1:4566", Poll: cloudsource.Poll{Interval: 30 * time.Minute, PollTimeout: time.Minute}}},
	}
	for _, tc := range tests {
		var o Options
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		o.AddPollFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, o, cmpopts.IgnoreUnexported(cloudsource.Poll{})); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
		if o.Given() != tc.want.Enabled {
			t.Errorf("%v: Given() = %v", tc.args, o.Given())
		}
	}
}

func TestOptionsSource(t *testing.T) {
	isolate(t)
	tests := []struct {
		name string
		o    Options
		err  string // a part of the error; "" for a source
		none bool   // no source at all
	}{
		{name: "not given", o: Options{Region: "us-east-1"}, none: true},
		{name: "the defaults", o: Options{Enabled: true, Poll: cloudsource.Poll{PollTimeout: cloudsource.DefaultPollTimeout}}},
		{name: "a region and an endpoint", o: Options{Enabled: true, Region: "us-gov-west-1", Endpoint: "https://ec2.us-gov-west-1.amazonaws.com"}},
		{name: "a bad region", o: Options{Enabled: true, Region: "US East"}, err: `--aws-region "US East" is not a region name`},
		{name: "a zone for a region", o: Options{Enabled: true, Region: "us-east-1a"}, err: `--aws-region "us-east-1a"`},
		{name: "an endpoint without scheme", o: Options{Enabled: true, Endpoint: "ec2.us-east-1.amazonaws.com"}, err: "--aws-endpoint \"ec2.us-east-1.amazonaws.com\": want an absolute http(s) URL"},
		{name: "a negative timeout", o: Options{Enabled: true, Poll: cloudsource.Poll{PollTimeout: -time.Second}}, err: "--aws-poll-timeout (-1s) must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.o.Source(nil, nil)
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			if (s == nil) != (tc.none || tc.err != "") {
				t.Fatalf("source %v, want one: %v", s, !tc.none)
			}
			if s == nil {
				return
			}
			want := &Source{Base: cloudsource.Base{PollTimeout: tc.o.PollTimeout}, Region: tc.o.Region, Endpoint: tc.o.Endpoint}
			if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(Source{}), cmpopts.IgnoreFields(Source{}, "Log")); diff != "" {
				t.Errorf("source (-want +got):\n%s", diff)
			}
			if s.Name() != Name || s.Timeout() != tc.o.PollTimeout {
				t.Errorf("Name() = %q, Timeout() = %v", s.Name(), s.Timeout())
			}
		})
	}
}

// TestUseNodes: a Lister given later is taken, one already set stays.
func TestUseNodes(t *testing.T) {
	isolate(t)
	mine := func(context.Context) ([]nodes.Node, error) { return []nodes.Node{{Name: "mine"}}, nil }
	theirs := func(context.Context) ([]nodes.Node, error) { return []nodes.Node{{Name: "theirs"}}, nil }
	for _, tc := range []struct {
		given nodes.Lister
		want  string
	}{{nil, "theirs"}, {mine, "mine"}} {
		s, err := (&Options{Enabled: true}).Source(nil, tc.given)
		if err != nil {
			t.Fatal(err)
		}
		s.UseNodes(theirs)
		got, _ := s.Nodes(context.Background())
		if got[0].Name != tc.want {
			t.Errorf("Nodes listed %q, want %q", got[0].Name, tc.want)
		}
	}
}
