package test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/scheduler/fabricplacement"
	"github.com/fabricmap/fabricmap/topology"
)

// placementCase is one PodGroup submitted to fabricmap-scheduler in its own pool of nodes.
type placementCase struct {
	name string
	pool string
	gang func(fabrictest.Keys) gang
	// leaves is how many of the gang's pods each leaf must hold, exactly; nil: the gang must stay pending.
	leaves map[string]int
	// nvlink is the NVLink domain all the gang's pods must share; empty: any.
	nvlink string
	// pipelines are the pipeline groups, by pod index (ranks follow the pods' names): each must sit in one
	// leaf, each in a different one.
	pipelines [][]int
	// reason is what the PodGroupScheduled condition's message of a pending gang must contain.
	reason string
}

// TestFabricmapScheduler runs fabricmap-scheduler with the workload-aware scheduling gates on the node labels
// fabricmap writes for an inferred fabric, and reads from the pods' bindings where each gang landed: a gang of
// 4 x 8 GPUs that may span the spine lands in the lowest and tightest leaf that holds it; a DP 2 x PP 2 gang
// that fits no leaf lands under the one spine with room, 2 + 2, its ranks in order so that each pipeline group
// (ranks 0-1, 2-3) stays inside a leaf; a leaf with a degraded link is avoided although it fits tighter; a
// gang held to the accelerator tier (fabricmap.io/highest-tier) lands in the tightest NVLink domain;
// PodGroups that name a tier that does not exist or are larger than the cluster stay pending with fabricmap's
// reason; then one gang that fits nowhere costs the scheduler at most 1 % of a core while it waits; and last,
// nodes labelled with custom keys that the aggregator's Lease names are placed on by those keys.
func TestFabricmapScheduler(t *testing.T) {
	testenv.Require(t)
	ctx := t.Context()
	labels, k := fabrictest.Labels(t, fabric)
	fabrictest.CreateNodes(t, ctx, testenv.Shared.Client, fabric, labels)
	bin := startScheduler(t)

	t.Run("placements", func(t *testing.T) { runCases(t, k) })
	// Once every case's gang is gone: what one pending gang costs the scheduler.
	t.Run("a pending gang costs nothing", func(t *testing.T) { checkPendingCost(t, bin) })
	t.Run("a Job's PodGroup from the Job controller", func(t *testing.T) { checkJob(t, k) })
	// Last, as the keys it states hold for every node: custom keys read from the aggregator's Lease.
	t.Run("custom keys from the aggregator's Lease", checkCustomKeys)
}

// runCases runs the cases of TestFabricmapScheduler in parallel.
func runCases(t *testing.T, k fabrictest.Keys) {
	for _, tc := range []placementCase{
		{name: "lowest leaf that holds it", pool: "lowest",
			gang:   func(k fabrictest.Keys) gang { return gang{name: "lowest", pods: 4, key: k.Spine} },
			leaves: map[string]int{"leaf-a1": 4}},
		{name: "fragmented: pipeline groups inside leaves", pool: "fragmented",
			gang:   func(k fabrictest.Keys) gang { return gang{name: "pipeline", pods: 4, dp: 2, pp: 2, key: k.Spine} },
			leaves: map[string]int{"leaf-b1": 2, "leaf-b2": 2}, pipelines: [][]int{{0, 1}, {2, 3}}},
		{name: "degraded leaf avoided", pool: "degraded",
			gang:   func(k fabrictest.Keys) gang { return gang{name: "healthy", pods: 4, key: k.Spine} },
			leaves: map[string]int{"leaf-c2": 4}},
		{name: "one NVLink domain, the tightest", pool: "nvlink",
			gang: func(fabrictest.Keys) gang {
				return gang{name: "nvlink", pods: 2, annotations: map[string]string{fabricplacement.HighestTierAnnotation: topology.TierNameAccelerator}}
			},
			leaves: map[string]int{"leaf-e1": 2}, nvlink: nvlinkDomainY},
		{name: "no such tier", pool: "bad",
			gang: func(fabrictest.Keys) gang {
				return gang{name: "no-tier", pods: 2, annotations: map[string]string{fabricplacement.HighestTierAnnotation: "galaxy"}}
			},
			reason: "galaxy"},
		{name: "larger than the cluster", pool: "bad",
			gang:   func(fabrictest.Keys) gang { return gang{name: "too-large", pods: 40} },
			reason: "40 pods do not fit even in the empty cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCase(t, tc, k)
		})
	}
}

// runCase submits tc's gang in a namespace of its own and checks where it landed, or that it did not.
func runCase(t *testing.T, tc placementCase, k fabrictest.Keys) {
	ctx := t.Context()
	g := tc.gang(k)
	ns := "fs-" + g.name
	g.submit(t, ctx, ns, tc.pool)

	if tc.leaves == nil {
		testenv.Eventually(t, time.Minute, "the scheduler to find the gang unschedulable", func() (bool, string) {
			c, err := scheduledCondition(ctx, ns, g.name)
			if err != nil || c == nil {
				return false, fmt.Sprintf("condition %v, %v", c, err)
			}
			if c.Status == metav1.ConditionTrue {
				nodes, _, _ := boundNodes(ctx, ns)
				t.Fatalf("a gang that cannot be placed was scheduled (bound to %v): %+v", nodes, *c)
			}
			return c.Status == metav1.ConditionFalse && c.Reason == podGroupUnschedulable && strings.Contains(c.Message, tc.reason),
				fmt.Sprintf("%+v", *c)
		})
		nodes, pending, err := boundNodes(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) > 0 || pending != g.pods {
			t.Fatalf("an unschedulable gang has pods bound to %v (%d unbound)", nodes, pending)
		}
		return
	}

	nodes := waitBound(t, ctx, ns, g)
	leaves, err := countBy(ctx, nodes, k.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tc.leaves, leaves); diff != "" {
		t.Errorf("gang bound to %v: pods per leaf (-want +got):\n%s", nodes, diff)
	}
	t.Logf("bound to %v", nodes)
	checkPipelines(t, ns, g, tc.pipelines, k.Leaf)
	if tc.nvlink != "" {
		domains, err := countBy(ctx, nodes, k.NVLink)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{hypernodegen.LabelValue(topology.CanonicalNVLinkID(tc.nvlink)): g.pods}
		if diff := cmp.Diff(want, domains); diff != "" {
			t.Errorf("gang bound to %v: pods per NVLink domain (-want +got):\n%s", nodes, diff)
		}
	}
}

// checkPipelines checks that the pods of each pipeline group (indices of g's pods) share one leaf (their nodes'
// value of leafKey), and that no two groups share one.
func checkPipelines(t *testing.T, ns string, g gang, pipelines [][]int, leafKey string) {
	t.Helper()
	if len(pipelines) == 0 {
		return
	}
	ctx := t.Context()
	var got [][]string
	for _, group := range pipelines {
		var leaves []string
		for _, i := range group {
			var p corev1.Pod
			if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("%s-%d", g.name, i)}, &p); err != nil {
				t.Fatal(err)
			}
			l, err := countBy(ctx, []string{p.Spec.NodeName}, leafKey)
			if err != nil {
				t.Fatal(err)
			}
			leaves = append(leaves, slices.Collect(maps.Keys(l))...)
		}
		got = append(got, leaves)
	}
	seen := map[string]bool{}
	for i, leaves := range got {
		if len(slices.Compact(slices.Clone(leaves))) != 1 || seen[leaves[0]] {
			t.Errorf("pipeline groups %v sit in leaves %v: want each group in one leaf of its own (group %d)", pipelines, got, i)
			return
		}
		seen[leaves[0]] = true
	}
	t.Logf("pipeline groups %v in leaves %v", pipelines, got)
}
