package nvml

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/discovery"
)

// TestRegistered checks that the probe is registered as "nvml", that the registered factory passes sysfs
// through, and that it takes the library path from LibraryPathEnv (run end to end against a missing library).
func TestRegistered(t *testing.T) {
	if !slices.Contains(discovery.Names(), ProbeName) {
		t.Fatalf("discovery.Names() = %v, want it to contain %q", discovery.Names(), ProbeName)
	}
	const path = "/nonexistent/fabricmap-registered/libnvidia-ml.so.1"
	t.Setenv(LibraryPathEnv, path)
	probes, err := discovery.New(discovery.Config{SysfsRoot: "/fixture/sys"}, "nvml")
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1 || probes[0].Name() != "nvml" {
		t.Fatalf("discovery.New(nvml) = %v, want one probe named nvml", probes)
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
	if !strings.Contains(res.NotApplicable, path) {
		t.Errorf("NotApplicable = %q, want it to name %s", res.NotApplicable, path)
	}
}
