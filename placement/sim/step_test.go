package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/placement"
)

// stepFabric is 16 one-GPU-pod nodes of 8 GPUs: leaves of 4 nodes, spines of 2 leaves, two spines under the
// core. Nodes 0-3 are leaf 0, 4-7 leaf 1 (spine 0), 8-11 leaf 2 (spine 1).
func stepFabric(t *testing.T) *measure {
	t.Helper()
	tr, nodes, err := FabricSpec{Nodes: 16, NodesPerLeaf: 4, LeavesPerSpine: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f, err := placement.NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	return newMeasure(f, nodes)
}

// TestLink prices each level of both presets from the published figures: 900 GB/s NVLink, a 400 Gb/s rail
// (50 GB/s) in the leaf, divided by 3 at each oversubscribed level of the generic fabric; 2 µs at the NIC and
// 0.5 µs a switch hop, 1, 3 and 5 hops.
func TestLink(t *testing.T) {
	got := map[string][]Link{}
	for _, n := range []Network{SuperPOD, Generic} {
		for level := range 4 {
			got[n.Name] = append(got[n.Name], n.Link(level))
		}
	}
	want := map[string][]Link{
		"superpod": {{900, 1}, {50, 2.5}, {50, 3.5}, {50, 4.5}},
		"generic":  {{900, 1}, {50, 2.5}, {50.0 / 3, 3.5}, {50.0 / 9, 4.5}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

// TestStepTime lays out hand-computed jobs on stepFabric and checks the layout and the step time.
func TestStepTime(t *testing.T) {
	m := stepFabric(t)
	node := func(i int) string { return m.f.Nodes()[i] }
	ranks := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, node(i))
		}
		return out
	}
	// DP 4, 1 s of compute, 10 GB of gradients: the ring moves 2·3/4·10 GB = 15 GB through each GPU's slowest
	// link, and 2·3 = 6 messages pay its latency.
	dp4 := Step{ComputeSeconds: 1, GradientBytes: 10e9}
	// DP 2 x PP 2, 32 MB of activations, 8 microbatches: 2·(8+2-2) = 16 transfers over the slowest hop; the ring
	// moves 2·1/2·4 GB = 4 GB, 2 messages.
	dp2pp2 := Step{ComputeSeconds: 1, GradientBytes: 4e9, ActivationBytes: 32e6, Microbatches: 8}
	type result struct {
		Layout  Layout
		Seconds float64
	}
	cases := []struct {
		name   string
		net    Network
		step   Step
		ranks  []string
		dp, pp int
		want   result
	}{
		{"one leaf", Generic, dp4, ranks(0, 1, 2, 3), 4, 1,
			result{Layout{Ring: 1}, 1 + 15e9/50e9 + 6*2.5e-6}},
		{"two leaves, generic 3:1", Generic, dp4, ranks(0, 1, 4, 5), 4, 1,
			result{Layout{Ring: 2}, 1 + 15e9/(50e9/3) + 6*3.5e-6}},
		{"two spines, generic 3:1 twice", Generic, dp4, ranks(0, 1, 8, 9), 4, 1,
			result{Layout{Ring: 3}, 1 + 15e9/(50e9/9) + 6*4.5e-6}},
		{"two leaves, superpod 1:1", SuperPOD, dp4, ranks(0, 1, 4, 5), 4, 1,
			result{Layout{Ring: 2}, 1 + 15e9/50e9 + 6*3.5e-6}},
		{"two spines, superpod 1:1", SuperPOD, dp4, ranks(0, 1, 8, 9), 4, 1,
			result{Layout{Ring: 3}, 1 + 15e9/50e9 + 6*4.5e-6}},
		{"replicas in leaves, rings across", Generic, dp2pp2, ranks(0, 1, 4, 5), 2, 2,
			result{Layout{Ring: 2, Hop: 1}, 1 + 4e9/(50e9/3) + 2*3.5e-6 + 16*(32e6/50e9+2.5e-6)}},
		{"stages in leaves, hops across", Generic, dp2pp2, ranks(0, 4, 1, 5), 2, 2,
			result{Layout{Ring: 1, Hop: 2}, 1 + 4e9/50e9 + 2*2.5e-6 + 16*(32e6/(50e9/3)+3.5e-6)}},
		{"one pod", Generic, Step{ComputeSeconds: 3, GradientBytes: 1e9}, ranks(7), 1, 1,
			result{Layout{}, 3}},
	}
	got, want := map[string]result{}, map[string]result{}
	for _, tc := range cases {
		l := m.layout(tc.ranks, tc.dp, tc.pp)
		got[tc.name] = result{l, tc.net.StepSeconds(tc.step, tc.dp, tc.pp, l)}
		want[tc.name] = tc.want
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("layouts and step times (-want +got):\n%s", diff)
	}
}

// TestIdealAndSlowdown checks the ideal layout (the closest domain that could hold a ring or a replica on the
// empty fabric) and the slowdown against it.
func TestIdealAndSlowdown(t *testing.T) {
	m := stepFabric(t)
	cases := []struct {
		name string
		job  Job
		want Layout
	}{
		{"4 pods fit a leaf", Job{Pods: 4, GPUsPerPod: 8}, Layout{Ring: 1}},
		{"8 pods fit a spine", Job{Pods: 8, GPUsPerPod: 8}, Layout{Ring: 2}},
		{"16 pods need the core", Job{Pods: 16, GPUsPerPod: 8}, Layout{Ring: 3}},
		{"16 pods, replicas of 8: rings of 2 in a leaf, replicas in a spine", Job{Pods: 16, PP: 8, GPUsPerPod: 8}, Layout{Ring: 1, Hop: 2}},
		{"4 pods of 2 GPUs fit a node", Job{Pods: 4, GPUsPerPod: 2}, Layout{}},
	}
	got, want := map[string]Layout{}, map[string]Layout{}
	for _, tc := range cases {
		got[tc.name], want[tc.name] = m.ideal(tc.job), tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ideal layouts (-want +got):\n%s", diff)
	}
	// Two leaves of one spine against the ideal leaf, on the generic fabric: (1 + 0.9 s) / (1 + 0.3 s).
	s := Step{ComputeSeconds: 1, GradientBytes: 10e9}
	sd := Generic.Slowdown(s, 4, 1, Layout{Ring: 2}, Layout{Ring: 1})
	if want := (1 + 0.9 + 6*3.5e-6) / (1 + 0.3 + 6*2.5e-6); !cmp.Equal(sd, want, cmpopts.EquateApprox(1e-12, 0)) {
		t.Errorf("slowdown %v, want %v", sd, want)
	}
}
