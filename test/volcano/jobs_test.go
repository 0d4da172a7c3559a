package volcano

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// leafKey is the node label of a node's leaf (the default keys' lowest switch tier).
var leafKey = hypernodegen.DefaultLabelKeys().Tiers[0]

// jobCase is one Volcano Job of pods × 8 GPUs in one pool, with the networkTopology it asks for.
type jobCase struct {
	name, pool string
	pods       int
	// topology is the Job's spec.networkTopology.
	topology map[string]any
	// pending: the job must stay unscheduled; else every pod must be bound, and (maxTier > 0) all inside one
	// HyperNode of tier at most maxTier.
	pending bool
	maxTier int
	// spans is how many leaves the pods must span at least (0: not checked).
	spans int
}

var jobCases = []jobCase{
	{name: "hard tier 1 that no NVLink domain holds stays pending", pool: "tier1", pods: 4,
		topology: map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}, pending: true},
	{name: "hard tier 2 lands in one leaf", pool: "tier2", pods: 4,
		topology: map[string]any{"mode": "hard", "highestTierAllowed": int64(2)}, maxTier: 2},
	{name: "highestTierName leaf lands in one leaf", pool: "tiername", pods: 4,
		topology: map[string]any{"mode": "hard", "highestTierName": "leaf"}, maxTier: 2},
	{name: "soft mode places a job no leaf holds", pool: "soft", pods: 5,
		topology: map[string]any{"mode": "soft"}, spans: 2},
	{name: "hard tier 1 lands in one NVLink domain", pool: "nvlink", pods: 2,
		topology: map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}, maxTier: 1},
	{name: "hard tier 3 spans leaves inside the root", pool: "span", pods: 5,
		topology: map[string]any{"mode": "hard", "highestTierAllowed": int64(3)}, maxTier: 3, spans: 2},
}

// runJob creates jc's namespace and Volcano Job, checks where its pods land (or that none does), and
// deletes them.
func runJob(t *testing.T, ctx context.Context, jc jobCase) {
	c := testenv.Shared.Client
	ns := "job-" + jc.pool
	must(t, "creating namespace "+ns, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	job := volcanoJob(ns, jc)
	must(t, "creating the Volcano Job", c.Create(ctx, job))
	t.Cleanup(func() { cleanUpJob(t, ns) })
	if jc.pending {
		checkPending(t, ctx, ns, jc)
		return
	}
	var pods corev1.PodList
	testenv.Eventually(t, 2*time.Minute, fmt.Sprintf("%d pods of %s bound", jc.pods, jc.name), func() (bool, string) {
		must(t, "listing pods", c.List(ctx, &pods, client.InNamespace(ns)))
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == jc.pods && len(pods.Items) == jc.pods, fmt.Sprintf("%d of %d pods bound (%d pods)", bound, jc.pods, len(pods.Items))
	})
	var nodes []string
	for _, p := range pods.Items {
		nodes = append(nodes, p.Spec.NodeName)
	}
	hns := readHyperNodes(t, ctx)
	if jc.maxTier > 0 {
		within := inside(hns, nodes, jc.maxTier)
		if within == "" {
			t.Errorf("the pods landed on %v: no HyperNode of tier <= %d holds them all", nodes, jc.maxTier)
		} else {
			t.Logf("the pods landed on %v, inside %s", nodes, within)
		}
	}
	if jc.spans > 0 {
		if got := leavesOf(hns, nodes); len(got) < jc.spans {
			t.Errorf("the pods landed on %v, in leaves %v: want them across at least %d leaves", nodes, got, jc.spans)
		}
	}
}

// volcanoJob is jc as a Volcano Job in ns: one task of jc.pods pods each asking for all 8 GPUs of a node of
// its pool, gang-scheduled (minAvailable: every pod), written out whole as Volcano's webhook would leave it.
func volcanoJob(ns string, jc jobCase) *unstructured.Unstructured {
	pod := map[string]any{
		"spec": map[string]any{
			"restartPolicy": "Never",
			"nodeSelector":  map[string]any{poolLabel: jc.pool},
			"containers": []any{map[string]any{
				"name": "trainer", "image": "registry.invalid/trainer:1.0",
				"resources": map[string]any{
					"requests": map[string]any{"nvidia.com/gpu": int64(gpusPerNode), "cpu": "1"},
					"limits":   map[string]any{"nvidia.com/gpu": int64(gpusPerNode)},
				},
			}},
		},
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
		"metadata": map[string]any{"name": "train", "namespace": ns},
		"spec": map[string]any{
			"schedulerName":   "volcano",
			"queue":           "default",
			"minAvailable":    int64(jc.pods),
			"maxRetry":        int64(3),
			"networkTopology": jc.topology,
			"tasks": []any{map[string]any{
				"name": "worker", "replicas": int64(jc.pods), "minAvailable": int64(jc.pods), "template": pod,
			}},
		},
	}}
}

// checkPending waits until Volcano's scheduler has judged the job's PodGroup and says it cannot place it,
// then checks that no pod of it is bound.
func checkPending(t *testing.T, ctx context.Context, ns string, jc jobCase) {
	c := testenv.Shared.Client
	testenv.Eventually(t, 2*time.Minute, "the PodGroup judged unschedulable", func() (bool, string) {
		var pgs unstructured.UnstructuredList
		pgs.SetAPIVersion("scheduling.volcano.sh/v1beta1")
		pgs.SetKind("PodGroupList")
		must(t, "listing PodGroups", c.List(ctx, &pgs, client.InNamespace(ns)))
		for _, pg := range pgs.Items {
			conds, _, _ := unstructured.NestedSlice(pg.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Unschedulable" && m["status"] == "True" {
					t.Logf("PodGroup %s: %v", pg.GetName(), m["message"])
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d PodGroups, none Unschedulable yet", len(pgs.Items))
	})
	// Several more scheduling cycles (500 ms each) go by: still nothing bound.
	time.Sleep(5 * time.Second)
	var pods corev1.PodList
	must(t, "listing pods", c.List(ctx, &pods, client.InNamespace(ns)))
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s bound to %s: the job asked for one tier-1 domain and none holds %d pods", p.Name, p.Spec.NodeName, jc.pods)
		}
	}
}

// inside names the lowest HyperNode of tier at most maxTier that holds every node of nodes; "" when none does.
func inside(hns map[string]hyperNodeState, nodes []string, maxTier int) string {
	best, bestTier := "", maxTier+1
	for name, hn := range hns {
		if !hn.owned || hn.tier > maxTier || hn.tier >= bestTier {
			continue
		}
		all := true
		for _, n := range nodes {
			if !slices.Contains(hn.nodes, n) {
				all = false
				break
			}
		}
		if all {
			best, bestTier = name, hn.tier
		}
	}
	return best
}

// leavesOf returns the leaves (tier-2 HyperNodes) that hold the nodes.
func leavesOf(hns map[string]hyperNodeState, nodes []string) []string {
	var out []string
	for name, hn := range hns {
		if hn.tier != 2 || !hn.owned {
			continue
		}
		for _, n := range nodes {
			if slices.Contains(hn.nodes, n) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// cleanUpJob deletes the job and its pods at once (no kubelet will ever confirm a graceful deletion).
func cleanUpJob(t *testing.T, ns string) {
	ctx := context.Background()
	c := testenv.Shared.Client
	job := &unstructured.Unstructured{}
	job.SetAPIVersion("batch.volcano.sh/v1alpha1")
	job.SetKind("Job")
	job.SetNamespace(ns)
	job.SetName("train")
	if err := c.Delete(ctx, job); client.IgnoreNotFound(err) != nil {
		t.Errorf("deleting the job in %s: %v", ns, err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil && !strings.Contains(err.Error(), "not found") {
		t.Errorf("deleting the pods in %s: %v", ns, err)
	}
}
