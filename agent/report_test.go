package agent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

func TestBuildReport(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	earlier := now.Add(-time.Hour)
	tests := []struct {
		name      string
		outcomes  []outcome
		prev      []v1alpha1.ProbeCondition
		wantState map[string]v1alpha1.ProbeState
		wantTrans map[string]time.Time
		check     func(t *testing.T, r *v1alpha1.NodeFabricReport)
	}{{
		name: "results merge and lists are sorted",
		outcomes: []outcome{
			{name: "lldp", result: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{{Interface: "eth1", ChassisID: "b"}, {Interface: "eth0", ChassisID: "a"}}}},
			{name: "nvml", result: discovery.Result{GPUs: []v1alpha1.GPU{{Index: 1, UUID: "GPU-1"}, {Index: 0, UUID: "GPU-0"}}, NVLinkDomain: "c.1"}},
		},
		wantState: map[string]v1alpha1.ProbeState{"lldp": v1alpha1.ProbeAvailable, "nvml": v1alpha1.ProbeAvailable},
		wantTrans: map[string]time.Time{"lldp": now, "nvml": now},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			if r.Spec.Neighbors[0].Interface != "eth0" || r.Spec.GPUs[0].Index != 0 || r.Spec.GPUCount != 2 || r.Spec.NVLinkDomain != "c.1" {
				t.Errorf("spec = %+v", r.Spec)
			}
		},
	}, {
		name:      "an unchanged state keeps its transition time",
		outcomes:  []outcome{{name: "lldp", result: discovery.Result{Warnings: []string{"eth0: truncated TLV"}}}},
		prev:      []v1alpha1.ProbeCondition{{Name: "lldp", State: v1alpha1.ProbeAvailable}},
		wantState: map[string]v1alpha1.ProbeState{"lldp": v1alpha1.ProbeAvailable},
		wantTrans: map[string]time.Time{"lldp": {}},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			if c := r.Status.Probes[0]; c.Reason != ReasonWarnings || c.Message != "eth0: truncated TLV" {
				t.Errorf("condition = %+v", c)
			}
		},
	}, {
		name:      "a failure with stale data says when it was last seen",
		outcomes:  []outcome{{name: "rdma", err: errors.New("boom"), lastGood: earlier}},
		prev:      []v1alpha1.ProbeCondition{{Name: "rdma", State: v1alpha1.ProbeAvailable}},
		wantState: map[string]v1alpha1.ProbeState{"rdma": v1alpha1.ProbeDegraded},
		wantTrans: map[string]time.Time{"rdma": now},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			c := r.Status.Probes[0]
			if c.Reason != ReasonFailed || c.LastSuccessTime == nil || !c.LastSuccessTime.Time.Equal(earlier) {
				t.Errorf("condition = %+v", c)
			}
		},
	}, {
		name: "two NVLink domains on one node give none",
		outcomes: []outcome{
			{name: "a", result: discovery.Result{NVLinkDomain: "x.1"}},
			{name: "b", result: discovery.Result{NVLinkDomain: "x.2"}},
		},
		wantState: map[string]v1alpha1.ProbeState{"a": v1alpha1.ProbeAvailable, "b": v1alpha1.ProbeAvailable},
		wantTrans: map[string]time.Time{"a": now, "b": now},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			if r.Spec.NVLinkDomain != "" {
				t.Errorf("NVLinkDomain = %q", r.Spec.NVLinkDomain)
			}
		},
	}, {
		name: "an HCA's nearest GPU is named by UUID when the GPU probe knows its PCI address",
		outcomes: []outcome{
			{name: "nvml", result: discovery.Result{GPUs: []v1alpha1.GPU{{Index: 0, UUID: "GPU-aa", PCIBusID: "0000:1b:00.0"}}}},
			{name: "rdma", result: discovery.Result{RDMADevices: []v1alpha1.RDMADevice{
				{Name: "mlx5_0", NearestGPU: "0000:1B:00.0"}, {Name: "mlx5_1", NearestGPU: "0000:9a:00.0"}}}},
		},
		wantState: map[string]v1alpha1.ProbeState{"nvml": v1alpha1.ProbeAvailable, "rdma": v1alpha1.ProbeAvailable},
		wantTrans: map[string]time.Time{"nvml": now, "rdma": now},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			if got := r.Spec.RDMADevices[0].NearestGPU; got != "GPU-aa" {
				t.Errorf("mlx5_0 nearest GPU = %q, want GPU-aa", got)
			}
			if got := r.Spec.RDMADevices[1].NearestGPU; got != "0000:9a:00.0" {
				t.Errorf("mlx5_1 nearest GPU = %q, want the PCI address kept (no GPU known there)", got)
			}
		},
	}, {
		name:      "a flood of neighbours is truncated, not rejected",
		outcomes:  []outcome{{name: "lldp", result: discovery.Result{Neighbors: manyNeighbors(maxNeighbors + 50)}}},
		wantState: map[string]v1alpha1.ProbeState{"lldp": v1alpha1.ProbeAvailable},
		wantTrans: map[string]time.Time{"lldp": now},
		check: func(t *testing.T, r *v1alpha1.NodeFabricReport) {
			if !r.Status.Truncated || len(r.Spec.Neighbors) != maxNeighbors || r.Status.NeighborCount != maxNeighbors {
				t.Errorf("truncated=%v neighbours=%d", r.Status.Truncated, len(r.Spec.Neighbors))
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := buildReport("n1", tc.outcomes, tc.prev, nil, now)
			if r.Name != "n1" || r.Kind != "NodeFabricReport" {
				t.Fatalf("meta = %+v %+v", r.TypeMeta, r.ObjectMeta)
			}
			for _, c := range r.Status.Probes {
				if c.State != tc.wantState[c.Name] {
					t.Errorf("%s state = %s, want %s", c.Name, c.State, tc.wantState[c.Name])
				}
				if !c.LastTransitionTime.Time.Equal(tc.wantTrans[c.Name]) {
					t.Errorf("%s transition = %v, want %v", c.Name, c.LastTransitionTime, tc.wantTrans[c.Name])
				}
			}
			if len(r.Status.Probes) != len(tc.wantState) {
				t.Errorf("probes = %+v", r.Status.Probes)
			}
			tc.check(t, r)
		})
	}
}

func TestContentHashIgnoresMetadata(t *testing.T) {
	a := buildReport("n1", []outcome{{name: "lldp"}}, nil, nil, time.Unix(1, 0))
	b := a.DeepCopy()
	b.ResourceVersion, b.Annotations = "42", map[string]string{"x": "y"}
	if contentHash(a) != contentHash(b) {
		t.Error("metadata changed the content hash")
	}
	b.Spec.NVLinkDomain = "c.1"
	if contentHash(a) == contentHash(b) {
		t.Error("a spec change left the content hash unchanged")
	}
}

func manyNeighbors(n int) []v1alpha1.LinkNeighbor {
	out := make([]v1alpha1.LinkNeighbor, n)
	for i := range out {
		out[i] = v1alpha1.LinkNeighbor{Interface: fmt.Sprintf("eth%04d", i), ChassisID: "x"}
	}
	return out
}
