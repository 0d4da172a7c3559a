package lldp

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

// --lldp-listen takes a duration of whole seconds; the deprecated --lldp-listen-seconds its number. The other
// flags set the lldp probe's settings, which the registered probe runs with.
func TestLLDPFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Settings
		err  bool
	}{
		{args: nil, want: Settings{ListenSeconds: 35}},
		{args: []string{"--lldp-listen", "1m"}, want: Settings{ListenSeconds: 60}},
		{args: []string{"--lldp-listen=0s"}, want: Settings{ListenSeconds: 0}},
		{args: []string{"--lldp-listen-seconds", "12"}, want: Settings{ListenSeconds: 12}},
		{args: []string{"--lldp-interfaces", "ens1,ens2", "--lldp-pcap", "x.pcap"},
			want: Settings{Interfaces: []string{"ens1", "ens2"}, Pcap: "x.pcap", ListenSeconds: 35}},
		{args: []string{"--lldp-listen", "1500ms"}, err: true},
		{args: []string{"--lldp-listen", "-5s"}, err: true},
		{args: []string{"--lldp-listen", "35"}, err: true},
	} {
		s := DefaultSettings()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s.AddFlags(fs)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want error %v", tc.args, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		if diff := cmp.Diff(tc.want, s); diff != "" {
			t.Errorf("%q: settings (-want +got):\n%s", tc.args, diff)
		}
		p, err := s.Probe(discovery.Config{SysfsRoot: "/fixture/sys"})
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := p.(*Probe); !cmp.Equal(got.cfg, tc.want) || got.sysfs != "/fixture/sys" {
			t.Errorf("%q: the probe runs with %+v under %q", tc.args, got.cfg, got.sysfs)
		}
	}
}

// --lldpcli defaults to lldpcli on the PATH; --lldpcli-file and --lldpd-socket are empty unless given.
func TestLLDPDFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want LLDPDSettings
	}{
		{args: nil, want: LLDPDSettings{CLIPath: "lldpcli"}},
		{args: []string{"--lldpcli", "/opt/lldpcli", "--lldpd-socket", "/run/x.sock", "--lldpcli-file", "n.json"},
			want: LLDPDSettings{CLIPath: "/opt/lldpcli", CLIFile: "n.json", Socket: "/run/x.sock"}},
	} {
		s := DefaultLLDPDSettings()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		s.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		p, err := s.Probe(discovery.Config{})
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if diff := cmp.Diff(tc.want, p.(*LLDPDProbe).cfg); diff != "" {
			t.Errorf("%q: the probe's settings (-want +got):\n%s", tc.args, diff)
		}
	}
}
