package gcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/gcp"
	"github.com/fabricmap/fabricmap/sources/gcp/gcptest"
)

// The flags are contracts: their names and defaults.
func TestFlags(t *testing.T) {
	var o gcp.Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	o.AddPollFlags(fs)
	got := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.DefValue })
	want := map[string]string{
		"from-gcp": "", "gcp-zones": "[]", "gcp-endpoint": "", "gcp-credentials-file": "",
		"gcp-interval": "10m0s", "gcp-poll-timeout": "2m0s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags and defaults (-want +got):\n%s", diff)
	}
	if o.Given() {
		t.Error("Given() without --from-gcp")
	}
	if err := fs.Parse([]string{"--from-gcp=fab-proj", "--gcp-zones=us-central1-a,us-central1-b", "--gcp-interval=5m"}); err != nil {
		t.Fatal(err)
	}
	if !o.Given() || o.Project != "fab-proj" || !cmp.Equal(o.Zones, []string{"us-central1-a", "us-central1-b"}) || o.Interval != 5*time.Minute {
		t.Errorf("parsed %+v", o)
	}
}

func TestSourceSettings(t *testing.T) {
	dir := t.TempDir()
	notAKey := filepath.Join(dir, "not-a-key.json")
	if err := os.WriteFile(notAKey, []byte(`{"type": "authorized_user"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := gcp.Options{Project: "fab-proj", Poll: cloudsource.Poll{PollTimeout: time.Minute, Interval: time.Minute}}
	for _, tc := range []struct {
		name    string
		edit    func(*gcp.Options)
		wantErr string // "" : a source
		none    bool   // no source and no error
	}{
		{name: "not given", edit: func(o *gcp.Options) { o.Project = "" }, none: true},
		{name: "Application Default Credentials", edit: func(*gcp.Options) {}},
		{name: "an http endpoint without credentials", edit: func(o *gcp.Options) { o.Endpoint = "http://127.0.0.1:1/compute/v1" }},
		{name: "zones", edit: func(o *gcp.Options) { o.Zones = []string{"us-central1-a", " europe-west4-b", "us-central1-a"} }},
		{name: "a project with a slash", edit: func(o *gcp.Options) { o.Project = "org/proj" }, wantErr: `--from-gcp "org/proj": want a project ID`},
		{name: "a zone that is no name", edit: func(o *gcp.Options) { o.Zones = []string{"US_Central1"} }, wantErr: `--gcp-zones: "US_Central1" is no zone name`},
		{name: "an endpoint without scheme", edit: func(o *gcp.Options) { o.Endpoint = "compute.googleapis.com" }, wantErr: "want an http:// or https:// URL"},
		{name: "a key file over http", edit: func(o *gcp.Options) { o.Endpoint = "http://proxy/compute/v1/"; o.CredentialsFile = notAKey }, wantErr: "would travel in clear text"},
		{name: "a missing key file", edit: func(o *gcp.Options) { o.CredentialsFile = filepath.Join(dir, "missing.json") }, wantErr: "--gcp-credentials-file: open"},
		{name: "a key file that is no service account key", edit: func(o *gcp.Options) { o.CredentialsFile = notAKey }, wantErr: "credentials: --gcp-credentials-file"},
		{name: "a zero --gcp-poll-timeout", edit: func(o *gcp.Options) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddPollFlags(fs)
			if err := fs.Parse([]string{"--gcp-poll-timeout=0"}); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "--gcp-poll-timeout (0s) must be positive"},
		// `fabricmap topology` registers no poll flags: zero is the poller's default, not refused.
		{name: "no poll flags", edit: func(o *gcp.Options) { o.Poll = cloudsource.Poll{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gcptest.Offline(t)
			o := valid
			tc.edit(&o)
			s, err := o.Source(nil, nil)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "Google Cloud source: ") {
					t.Errorf("err = %v, want it to name the source", err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.none != (s == nil):
				t.Fatalf("source %v, want none: %v", s, tc.none)
			case s != nil:
				if s.Name() != gcp.Name || s.Timeout() != o.PollTimeout || s.Project != o.Project || s.Attempts != gcp.DefaultAttempts {
					t.Errorf("source %+v", s)
				}
				if tc.name == "zones" && !cmp.Equal(s.Zones, []string{"us-central1-a", "europe-west4-b"}) {
					t.Errorf("zones %q", s.Zones)
				}
				if tc.name == "an http endpoint without credentials" && s.BasePath != "http://127.0.0.1:1/compute/v1/" {
					t.Errorf("base path %q, want the endpoint with a trailing /", s.BasePath)
				}
			}
		})
	}
}
