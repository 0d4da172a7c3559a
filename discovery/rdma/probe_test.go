package rdma

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/discovery/rdma/rdmatest"
)

func portClass(s string) v1alpha1.PortClass { return v1alpha1.PortClass(s) }

func TestRegisteredAsRDMA(t *testing.T) {
	if !slices.Contains(discovery.Names(), "rdma") {
		t.Fatalf("registered probes %q lack rdma", discovery.Names())
	}
	probes, err := discovery.New(discovery.Config{SysfsRoot: fixtureRoot("roce")}, "rdma")
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1 || probes[0].Name() != "rdma" {
		t.Fatalf("probes %v", probes)
	}
	res, err := probes[0].Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RDMADevices) != 3 || res.NotApplicable != "" || len(res.Warnings) != 0 {
		t.Fatalf("result %+v", res)
	}
	// The registered probe has no rules: every port is compute, and the RDMA devices are all it reports.
	for _, d := range res.RDMADevices {
		if d.Ports[0].Class != compute {
			t.Errorf("%s: class %s", d.Name, d.Ports[0].Class)
		}
	}
	if res.GPUs != nil || res.Neighbors != nil || res.NVLinkDomain != "" {
		t.Errorf("rdma reported more than RDMA devices: %+v", res)
	}
}

func TestProbeNotApplicableAndDefaultRoot(t *testing.T) {
	p, err := New(discovery.Config{SysfsRoot: fixtureRoot("no-rdma")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background())
	want := "no RDMA devices under testdata/no-rdma/class/infiniband"
	if err != nil || res.NotApplicable != want || res.RDMADevices != nil {
		t.Errorf("Run = %+v, %v; want NotApplicable %q", res, err, want)
	}
	if p, _ := New(discovery.Config{}, Options{}); p.Root() != "/sys" {
		t.Errorf("default root %q", p.Root())
	}
}

func TestProbeRunError(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "class"), 0o755); err != nil {
		t.Fatal(err)
	}
	rdmatest.Replace(t, filepath.Join(root, "class", "infiniband"), "")
	p, err := New(discovery.Config{SysfsRoot: root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "rdma: cannot list "+root) {
		t.Errorf("Run error %v", err)
	}
}

// TestRegisteredProbeTakesLinkHealthFlags parses the --link-* flags as the agent and `fabricmap probe` do: the
// registered probe judges with them, and --help prints the thresholds in name order.
func TestRegisteredProbeTakesLinkHealthFlags(t *testing.T) {
	parse := func(args ...string) (*pflag.FlagSet, *discovery.Options, error) {
		var opts discovery.Options
		fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
		opts.AddFlags(fs)
		err := fs.Parse(append([]string{"--sysfs-root", fixtureRoot("roce")}, args...))
		return fs, &opts, err
	}
	fs, opts, err := parse("--link-error-thresholds", "symbol_error=5", "--link-error-thresholds", "out_of_sequence=0",
		"--link-flap-count", "2", "--link-health-window", "30m")
	if err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("link-error-thresholds").Value.String(); got != "out_of_sequence=0,symbol_error=5" {
		t.Errorf("--link-error-thresholds prints %q", got)
	}
	probes, err := opts.Probes("rdma")
	if err != nil {
		t.Fatal(err)
	}
	want := LinkHealthConfig{ErrorsPerHour: map[string]int64{"symbol_error": 5, "out_of_sequence": 0},
		FlapCount: 2, Window: 30 * time.Minute}
	if diff := cmp.Diff(want, probes[0].(*Probe).judge.cfg); diff != "" {
		t.Errorf("the probe's link health settings (-want +got):\n%s", diff)
	}
	if got := probes[0].(*Probe).judge.reasons; !slices.Equal(got, []string{ReasonLinkDowned, "SymbolErrors", "OutOfSequence"}) {
		t.Errorf("reasons judged: %q", got)
	}

	for _, args := range [][]string{
		{"--link-flap-count", "0"}, {"--link-health-window", "10ms"},
		{"--link-error-thresholds", "link_downed=1"}, {"--link-error-thresholds", "symbol_error=-1"},
		{"--link-error-thresholds", "../x=1"},
	} {
		_, opts, err := parse(args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if _, err := opts.Probes("rdma"); err == nil ||
			!strings.Contains(err.Error(), "link health") {
			t.Errorf("%q: error %v", args, err)
		}
	}
	if _, _, err := parse("--link-error-thresholds", "symbol_error"); err == nil {
		t.Error("a threshold without a rate was taken")
	}
}
