//go:build linux && cgo

package discovery_test

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all" // registers every probe
)

// Every probe (all of them are linked on Linux with cgo) registers its own flags through Options, with the defaults the agent
// and `fabricmap probe` have always had; --sysfs-root is the one shared flag.
func TestOptionsFlags(t *testing.T) {
	var opts discovery.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	opts.AddFlags(fs)
	got := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.DefValue })
	want := map[string]string{
		"sysfs-root":              "/sys",
		"cloud-metadata":          "auto",
		"cloud-metadata-endpoint": "http://169.254.169.254",
		"ibnetdiscover-file":      "",
		"ibnetdiscover-interval":  "30m0s",
		"link-error-thresholds":   "link_error_recovery=3,local_link_integrity_errors=10,port_rcv_errors=10,symbol_error=10",
		"link-flap-count":         "3",
		"link-health-window":      "1h0m0s",
		"lldp-interfaces":         "[]",
		"lldp-listen":             "35s",
		"lldp-listen-seconds":     "35",
		"lldp-pcap":               "",
		"lldpcli":                 "lldpcli",
		"lldpcli-file":            "",
		"lldpd-socket":            "",
		"nvml-library":            "",
		"rdma-class-rules":        "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags and their defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cloud", "ibnetdiscover", "lldp", "lldpd", "nvml", "rdma"}, discovery.Names()); diff != "" {
		t.Errorf("registered probes (-want +got):\n%s", diff)
	}
}

// Two Options keep settings of their own: what one flag set parses does not reach the other's probes.
func TestOptionsOwnSettings(t *testing.T) {
	var a, b discovery.Options
	fa, fb := pflag.NewFlagSet("a", pflag.ContinueOnError), pflag.NewFlagSet("b", pflag.ContinueOnError)
	a.AddFlags(fa)
	b.AddFlags(fb)
	if err := fa.Parse([]string{"--cloud-metadata=bogus"}); err == nil {
		t.Fatal("--cloud-metadata=bogus was taken")
	}
	if err := fa.Parse([]string{"--link-flap-count=0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Probes("rdma"); err == nil || !strings.Contains(err.Error(), `probe "rdma": rdma: link health: flap count 0`) {
		t.Errorf("a's rdma probe: error %v, want the flap count refused", err)
	}
	if _, err := b.Probes("rdma"); err != nil {
		t.Errorf("b's rdma probe took a's flag: %v", err)
	}
}

// Probes builds the named probes in name order, every registered one when none is named, and refuses a name
// no probe registered.
func TestOptionsProbes(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{names: []string{"rdma", "cloud"}, want: []string{"cloud", "rdma"}},
		{want: discovery.Names()},
		{names: []string{"lldp", "bogus"}, wantErr: `unknown probe "bogus" (known: [cloud ibnetdiscover lldp lldpd nvml rdma])`},
	} {
		opts := discovery.Options{Config: discovery.Config{NodeName: "n1"}}
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		opts.AddFlags(fs)
		probes, err := opts.Probes(tc.names...)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %q", tc.names, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.names, err)
		}
		var got []string
		for _, p := range probes {
			got = append(got, p.Name())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: probes built (-want +got):\n%s", tc.names, diff)
		}
	}
}

// Register refuses a second probe of one name and a kind without settings.
func TestRegisterRefuses(t *testing.T) {
	for _, k := range []discovery.Kind{
		{Name: "rdma", Settings: func() discovery.Settings { return nil }},
		{Name: "no-settings"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", k.Name)
				}
			}()
			discovery.Register(k)
		}()
	}
}
