package nvml

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/discovery"
)

// TestRegistered checks that the probe is registered as "nvml", that the registered probe takes sysfs from the
// shared settings, and the library path from --nvml-library, else from LibraryPathEnv (run end to end against
// a missing library).
func TestRegistered(t *testing.T) {
	if !slices.Contains(discovery.Names(), ProbeName) {
		t.Fatalf("discovery.Names() = %v, want it to contain %q", discovery.Names(), ProbeName)
	}
	const env, flag = "/nonexistent/fabricmap-registered/libnvidia-ml.so.1", "/nonexistent/from-flag/libnvidia-ml.so.1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "environment", want: env},
		{name: "flag", args: []string{"--nvml-library", flag}, want: flag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(LibraryPathEnv, env)
			var opts discovery.Options
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			opts.AddFlags(fs)
			if err := fs.Parse(append([]string{"--sysfs-root", "/fixture/sys"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			probes, err := opts.Probes("nvml")
			if err != nil {
				t.Fatal(err)
			}
			if len(probes) != 1 || probes[0].Name() != "nvml" {
				t.Fatalf("Probes(nvml) = %v, want one probe named nvml", probes)
			}
			p, ok := probes[0].(*Probe)
			if !ok {
				t.Fatalf("registered probe is %T, want *Probe", probes[0])
			}
			if p.sysfsRoot != "/fixture/sys" {
				t.Errorf("sysfsRoot = %q, want /fixture/sys", p.sysfsRoot)
			}
			res, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.NotApplicable, tc.want) {
				t.Errorf("NotApplicable = %q, want it to name %s", res.NotApplicable, tc.want)
			}
		})
	}
}
