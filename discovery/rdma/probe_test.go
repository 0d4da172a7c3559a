package rdma

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
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
	replaceFile(t, filepath.Join(root, "class", "infiniband"), "")
	p, err := New(discovery.Config{SysfsRoot: root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "rdma: cannot list "+root) {
		t.Errorf("Run error %v", err)
	}
}
