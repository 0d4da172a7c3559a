package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// counts are the sizes of a report's lists that the CRD bounds.
type counts struct {
	GPUs, Devices, Neighbors             int
	MostPorts, MostGIDs, MostCharDevices int
}

func countsOf(s *v1alpha1.NodeFabricReportSpec) counts {
	c := counts{GPUs: len(s.GPUs), Devices: len(s.RDMADevices), Neighbors: len(s.Neighbors)}
	for _, d := range s.RDMADevices {
		c.MostPorts, c.MostCharDevices = max(c.MostPorts, len(d.Ports)), max(c.MostCharDevices, len(d.CharDevices))
		for _, p := range d.Ports {
			c.MostGIDs = max(c.MostGIDs, len(p.GIDs))
		}
	}
	return c
}

// overDevice is a device with more ports, GIDs and character devices than the CRD takes.
func overDevice(i int) v1alpha1.RDMADevice {
	d := v1alpha1.RDMADevice{Name: fmt.Sprintf("mlx5_%03d", i)}
	for c := range v1alpha1.MaxCharDevicesPerDevice + 3 {
		d.CharDevices = append(d.CharDevices, fmt.Sprintf("uverbs%d", c))
	}
	for n := range v1alpha1.MaxPortsPerDevice + 4 {
		p := v1alpha1.RDMAPort{Number: int32(n + 1)}
		for g := range v1alpha1.MaxGIDsPerPort + 5 {
			p.GIDs = append(p.GIDs, fmt.Sprintf("fe80:0000:0000:0000:0000:0000:0000:%04x", g))
		}
		d.Ports = append(d.Ports, p)
	}
	return d
}

// The agent never writes a report over the CRD's limits, whatever its probes return: every list is cut (the
// report's own to half the limit) and status.truncated says so; the probes' results are left as they were, for
// the next cycles.
func TestReportStaysWithinTheLimits(t *testing.T) {
	res := discovery.Result{Neighbors: manyNeighbors(v1alpha1.MaxNeighbors + 1)}
	for i := range v1alpha1.MaxGPUs + 1 {
		res.GPUs = append(res.GPUs, v1alpha1.GPU{Index: int32(i), UUID: fmt.Sprintf("GPU-%d", i)})
	}
	for i := range v1alpha1.MaxRDMADevices + 1 {
		res.RDMADevices = append(res.RDMADevices, overDevice(i))
	}
	before := countsOf(&v1alpha1.NodeFabricReportSpec{GPUs: res.GPUs, RDMADevices: res.RDMADevices, Neighbors: res.Neighbors})

	r := buildReport("n1", []outcome{{name: "all", result: res}}, nil, nil, time.Unix(1_800_000_000, 0))

	want := counts{GPUs: maxGPUs, Devices: maxDevices, Neighbors: maxNeighbors, MostPorts: v1alpha1.MaxPortsPerDevice,
		MostGIDs: v1alpha1.MaxGIDsPerPort, MostCharDevices: v1alpha1.MaxCharDevicesPerDevice}
	if diff := cmp.Diff(want, countsOf(&r.Spec)); diff != "" {
		t.Errorf("the report's lists (-want +got):\n%s", diff)
	}
	if !r.Status.Truncated {
		t.Error("status.truncated is false")
	}
	after := countsOf(&v1alpha1.NodeFabricReportSpec{GPUs: res.GPUs, RDMADevices: res.RDMADevices, Neighbors: res.Neighbors})
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the probe's result was changed (-before +after):\n%s", diff)
	}
}
