package oci

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/oci/ocitest"
)

// TestFlags: the flags' names and defaults are contracts the aggregator, the CLI and the chart share.
func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want Options
	}{{
		name: "defaults",
		want: Options{Poll: cloudsource.Poll{Interval: cloudsource.DefaultInterval, PollTimeout: cloudsource.DefaultPollTimeout}},
	}, {
		name: "every flag",
		args: []string{"--from-oci", ocitest.Compartment, "--oci-endpoint", "https://iaas.us-ashburn-1.oraclecloud.com",
			"--oci-config-file", "/etc/oci/config", "--oci-profile", "FABRICMAP", "--oci-interval", "30m", "--oci-poll-timeout", "5m"},
		want: Options{Compartment: ocitest.Compartment, Endpoint: "https://iaas.us-ashburn-1.oraclecloud.com",
			ConfigFile: "/etc/oci/config", Profile: "FABRICMAP", Poll: cloudsource.Poll{Interval: 30 * time.Minute, PollTimeout: 5 * time.Minute}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			o.AddPollFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, o, cmpopts.IgnoreUnexported(Options{}, cloudsource.Poll{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if o.Given() != (tc.want.Compartment != "") {
				t.Errorf("Given() = %v with --from-oci %q", o.Given(), o.Compartment)
			}
		})
	}
}

// TestSourceRefusesBadSettings: Source says what is wrong with the settings before any poll.
func TestSourceRefusesBadSettings(t *testing.T) {
	noMetadata(t)
	tests := []struct {
		name string
		opts Options
		want []string
	}{{
		name: "not an OCID",
		opts: Options{Compartment: "my-compartment"},
		want: []string{`--from-oci "my-compartment" is not a tenancy or compartment OCID`},
	}, {
		name: "an instance OCID",
		opts: Options{Compartment: ocitest.OCID("instance", "n1")},
		want: []string{"is not a tenancy or compartment OCID"},
	}, {
		name: "an endpoint with a path",
		opts: Options{Compartment: ocitest.Compartment, Endpoint: "https://iaas.us-ashburn-1.oraclecloud.com/20160918"},
		want: []string{"--oci-endpoint", "want a base URL"},
	}, {
		name: "an endpoint without a scheme",
		opts: Options{Compartment: ocitest.Compartment, Endpoint: "iaas.us-ashburn-1.oraclecloud.com"},
		want: []string{"--oci-endpoint"},
	}, {
		name: "a profile without a config file",
		opts: Options{Compartment: ocitest.Compartment, Profile: "FABRICMAP"},
		want: []string{`--oci-profile "FABRICMAP" needs --oci-config-file`},
	}, {
		name: "negative durations, all said at once",
		opts: Options{Compartment: "x", Poll: cloudsource.Poll{Interval: -time.Second}, Retry: cloudsource.Retry{MaxBackoff: -1}},
		want: []string{"--from-oci", "--oci-interval", "max backoff"},
	}, {
		name: "a config file that is not there",
		opts: Options{Compartment: ocitest.Compartment, ConfigFile: filepath.Join(t.TempDir(), "missing")},
		want: []string{"config file", "missing", "profile DEFAULT"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.opts.Source(nil, nil)
			if err == nil {
				t.Fatalf("Source gave %+v and no error", s)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
	if s, err := (&Options{}).Source(nil, nil); s != nil || err != nil {
		t.Errorf("without --from-oci: Source() = %v, %v; want nil, nil", s, err)
	}
}

// TestConfigFile: credentials from an OCI config file's profile sign the requests.
func TestConfigFile(t *testing.T) {
	noMetadata(t)
	k := key(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	config := filepath.Join(dir, "config")
	other, err := ocitest.NewKey("us-phoenix-1")
	if err != nil {
		t.Fatal(err)
	}
	// DEFAULT holds another key: only the profile asked for signs.
	text := other.ConfigFile("DEFAULT", filepath.Join(dir, "other.pem")) + "\n" + k.ConfigFile("FABRICMAP", keyFile)
	for path, data := range map[string][]byte{keyFile: k.PEM, filepath.Join(dir, "other.pem"): other.PEM, config: []byte(text)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := machine("h100-1", h100, "island-1", "block-1", "local-1", "")
	api := ocitest.New(ocitest.Compartment, []ocitest.Host{m.Host})
	api.Key = k
	opts := Options{Compartment: ocitest.Compartment, Endpoint: serve(t, api), ConfigFile: config, Profile: "FABRICMAP", Retry: cloudsource.Retry{MaxBackoff: time.Millisecond}}
	var logs logBuffer
	s := newSource(t, opts, []nodes.Node{m.Node}, &logs)
	in, err := s.Evidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Nodes) != 1 {
		t.Errorf("%d nodes placed, want 1", len(in.Nodes))
	}

	opts.Profile = "NOPE"
	if _, err := opts.Source(nil, nil); err == nil || !strings.Contains(err.Error(), "profile NOPE") {
		t.Errorf("a profile the file lacks: want an error naming it, got %v", err)
	}
}

// TestInstancePrincipal: without a config file the source asks the instance metadata service for the
// instance principal at its first poll (not before), and the poll's deadline bounds the wait, though the SDK
// retries the metadata service for minutes without a context. The metadata service is a closed port on
// 127.0.0.1 here.
func TestInstancePrincipal(t *testing.T) {
	noMetadata(t)
	api := ocitest.New(ocitest.Compartment, nil)
	var logs logBuffer
	s := newSource(t, Options{Compartment: ocitest.Compartment, Endpoint: serve(t, api)}, []nodes.Node{ociNode("n1")}, &logs)
	for poll := 1; poll <= 2; poll++ {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		_, err := s.Evidence(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "the instance principal") || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("poll %d: want the deadline to end the wait for the instance principal, got %v", poll, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("poll %d took %v past its deadline", poll, d)
		}
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d requests reached the API without credentials", n)
	}
}
