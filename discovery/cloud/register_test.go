package cloud_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/cloud"
	"github.com/fabricmap/fabricmap/discovery/cloud/cloudtest"
)

// The probe is registered as "cloud" and takes the sysfs root from the shared settings, the mode and the
// endpoint from its own, as the flags set them.
func TestRegisteredFromFlags(t *testing.T) {
	if !slices.Contains(discovery.Names(), cloud.Name) {
		t.Fatalf("registered probes %v lack %q", discovery.Names(), cloud.Name)
	}
	srv := cloudtest.NewOCI(t, cloudtest.OCI{ID: ociID, AvailabilityDomain: ociAD})
	var opts discovery.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{"--sysfs-root", cloudtest.SysfsWithDMI(t, cloudtest.DMIOCI), "--cloud-metadata-endpoint", srv.URL}); err != nil {
		t.Fatal(err)
	}
	probes, err := opts.Probes(cloud.Name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := probes[0].Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := discovery.Result{Cloud: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: ociID, Zone: ociAD}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// --cloud-metadata takes auto (the default), on, off or a provider, and refuses anything else;
// --cloud-metadata-endpoint defaults to the link-local address.
func TestCloudMetadataFlags(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		wantMode     string
		wantEndpoint string
		wantErr      string
	}{
		{wantMode: "auto", wantEndpoint: "http://169.254.169.254"},
		{args: []string{"--cloud-metadata=on"}, wantMode: "on", wantEndpoint: "http://169.254.169.254"},
		{args: []string{"--cloud-metadata", "off"}, wantMode: "off", wantEndpoint: "http://169.254.169.254"},
		{args: []string{"--cloud-metadata=gcp", "--cloud-metadata-endpoint=http://127.0.0.1:9"}, wantMode: "gcp", wantEndpoint: "http://127.0.0.1:9"},
		{args: []string{"--cloud-metadata=azure"}, wantErr: `"azure": want one of auto, on, off, aws, gcp, oci`},
		{args: []string{"--cloud-metadata=AWS"}, wantErr: `"AWS": want one of auto, on, off, aws, gcp, oci`},
	} {
		s := cloud.DefaultSettings()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s.AddFlags(fs)
		err := fs.Parse(tc.args)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case s.Mode != tc.wantMode || s.Endpoint != tc.wantEndpoint:
			t.Errorf("%q: mode %q, endpoint %q; want %q, %q", tc.args, s.Mode, s.Endpoint, tc.wantMode, tc.wantEndpoint)
		}
	}
}

// New refuses options the probe cannot run with, naming what is wrong; the zero options are the defaults.
func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		opts cloud.Options
		want string
	}{
		{opts: cloud.Options{}},
		{opts: cloud.Options{Mode: "sometimes"}, want: `cloud: metadata mode "sometimes": want one of auto, on, off, aws, gcp, oci`},
		{opts: cloud.Options{Timeout: -1}, want: "cloud: request timeout -1ns is negative"},
		{opts: cloud.Options{Endpoint: "169.254.169.254"}, want: `cloud: metadata endpoint "169.254.169.254" is not an http:// URL`},
	} {
		_, err := cloud.New(tc.opts)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("New(%+v) error %q, want %q", tc.opts, got, tc.want)
		}
	}
}
