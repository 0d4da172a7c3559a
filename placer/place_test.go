package placer

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fabricmap/fabricmap/wellknown"
)

// testGangBoundWherePlanned: in every declaration form, a gated gang is pinned, ungated and bound by the real
// kube-scheduler exactly on the nodes of its plan, inside one unit.
func testGangBoundWherePlanned(t *testing.T) {
	for i, tc := range []struct {
		form        string
		labels      map[string]string
		annotations map[string]string
		podGroup    bool
		koordinator bool           // the PodGroup in Koordinator's group (scheduling.sigs.k8s.io)
		volcano     map[string]any // a Volcano PodGroup's spec
	}{
		{form: "labels", labels: map[string]string{wellknown.GangLabel: "g", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}},
		{form: "podgroup", labels: map[string]string{wellknown.PodGroupLabel: "g", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, podGroup: true},
		{form: "podgroup-legacy-label", labels: map[string]string{wellknown.PodGroupLabelLegacy: "g"}, podGroup: true},
		{form: "koordinator-podgroup", labels: map[string]string{wellknown.PodGroupLabelLegacy: "g"}, koordinator: true},
		{form: "koordinator", labels: map[string]string{wellknown.PPLabel: "2"},
			annotations: map[string]string{wellknown.KoordinatorGangName: "g", wellknown.KoordinatorMinAvailable: "4",
				wellknown.KoordinatorTopology: `{"gatherStrategy":[{"layer":"unit","strategy":"MustGather"}]}`}},
		{form: "volcano", labels: map[string]string{wellknown.DPLabel: "2", wellknown.PPLabel: "2"}, annotations: map[string]string{wellknown.VolcanoGroupAnnotation: "g"},
			volcano: map[string]any{"minMember": int64(4), "networkTopology": map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}}},
	} {
		t.Run(tc.form, func(t *testing.T) {
			b := newBed(t)
			p := fmt.Sprintf("bw%d-", i)
			units := map[string][]string{p + "unit-a": {p + "a1", p + "a2"}, p + "unit-b": {p + "b1", p + "b2"}}
			for u, nodes := range units {
				b.addNodes(nodes...)
				b.addHyperNode(u, 1, "unit", nodes...)
			}
			b.addHyperNode(p+"leaf", 2, "leaf", p+"unit-a", p+"unit-b")
			// Something already runs on a1: the gang must count it.
			b.addPod(podSpec{name: "other", gpus: 6, node: p + "a1"})
			b.startPlacer()
			if tc.podGroup {
				b.podGroup("g", 4, nil)
			}
			if tc.koordinator {
				b.podGroupOf(LegacyPodGroupGVK, "g", map[string]any{"minMember": int64(4)}, nil)
			}
			if tc.volcano != nil {
				b.podGroupOf(VolcanoPodGroupGVK, "g", tc.volcano, nil)
			}
			b.gang("g", 4, 4, "", tc.labels, tc.annotations)
			nodes := b.bound("g", 4, 30*time.Second)
			// a1 has 2 GPUs left, so the gang's unit is unit-b: two pods on each node.
			for _, n := range nodes {
				if !slices.Contains(units[p+"unit-b"], n) {
					t.Fatalf("ranks on %v: want all in unit-b %v", nodes, units[p+"unit-b"])
				}
			}
			if nodes[0] != nodes[1] || nodes[2] != nodes[3] {
				t.Errorf("PP groups split across nodes: %v", nodes)
			}
			d, _ := decisionOf(&b.pods("g")[0])
			if d.GangDomain != p+"unit-b" || d.GangTier != 1 || d.Explanation == "" {
				t.Errorf("decision %+v: want gang domain %sunit-b at tier 1 with an explanation", d, p)
			}
			b.event(b.gangObjectName("g", tc.podGroup || tc.koordinator || tc.volcano != nil), ReasonPlaced, "ranks 0-3", 10*time.Second)
		})
	}
}

// gangObjectName is where a gang's Events go: the PodGroup, else the rank-0 pod.
func (b *bed) gangObjectName(gang string, podGroup bool) string {
	if podGroup {
		return gang
	}
	return gang + "-0"
}

// testGangWithRoles: an MPIJob-style gang, a launcher (1 GPU) and four workers (8 GPUs, DP 2 x PP 2), in a
// PodGroup of 5. Each pod is planned with its own request, so unit-a, four empty nodes and a5 with one GPU
// free, holds it: the launcher on a5, the workers' PP groups in the unit; planned with the workers' request
// for every pod, the gang would need five whole nodes, unit-b's.
func testGangWithRoles(t *testing.T) {
	b := newBed(t)
	units := map[string][]string{"roles-unit-a": {"roles-a1", "roles-a2", "roles-a3", "roles-a4", "roles-a5"},
		"roles-unit-b": {"roles-b1", "roles-b2", "roles-b3", "roles-b4", "roles-b5"}}
	for u, nodes := range units {
		b.addNodes(nodes...)
		b.addHyperNode(u, 1, "unit", nodes...)
	}
	b.addHyperNode("roles-leaf", 2, "leaf", "roles-unit-a", "roles-unit-b")
	b.addPod(podSpec{name: "other", gpus: 7, node: "roles-a5"})
	b.startPlacer()
	b.podGroup("mpi", 5, nil)
	labels := map[string]string{wellknown.PodGroupLabel: "mpi", wellknown.DPLabel: "2", wellknown.PPLabel: "2"}
	b.addPod(podSpec{name: "mpi-launcher", gpus: 1, gated: true, labels: labels})
	for i := range 4 {
		b.addPod(podSpec{name: fmt.Sprintf("mpi-worker-%d", i), gpus: 8, gated: true, labels: labels})
	}
	nodes := b.bound("mpi", 5, 30*time.Second)
	if nodes[0] != "roles-a5" {
		t.Errorf("the launcher bound on %s, want roles-a5, the node with one GPU free", nodes[0])
	}
	if got, want := slices.Sorted(slices.Values(nodes[1:])), units["roles-unit-a"][:4]; !slices.Equal(got, want) {
		t.Errorf("the workers bound on %v, want %v", got, want)
	}
	for _, p := range b.pods("mpi") {
		d, _ := decisionOf(&p)
		if want := "roles-unit-a"; p.Name == "mpi-launcher" && d.GroupDomain != "" || p.Name != "mpi-launcher" && d.GroupDomain != want {
			t.Errorf("pod %s: group domain %q; want the workers' groups in %s, the launcher in none", p.Name, d.GroupDomain, want)
		}
	}
}
