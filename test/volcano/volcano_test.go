package volcano

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// stillFor is how long no HyperNode may be written once the tree has settled with Volcano's controllers
// beside the aggregator (before the fix the two rewrote status.nodeCount after each other several times a
// second).
const stillFor = 60 * time.Second

// TestBesideVolcano runs Volcano's controller-manager (default controllers) and scheduler beside the
// aggregator on one fabric: the tree settles and stays still through a leaf change, Volcano Jobs land as
// their networkTopology asks, and Volcano's own discovery over the same nodes is reported, never touched.
func TestBesideVolcano(t *testing.T) {
	testenv.Require(t)
	dir := volcanoDir(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	installVolcanoCRDs(t, dir)
	must(t, "creating Volcano's namespace", client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: volcanoNamespace}})))
	createFabric(t, ctx)
	reg := startAggregator(t)
	controllers := startVolcano(t, dir+"/vc-controller-manager") // its default controllers, HyperNode's among them
	settled := waitSettled(t, ctx, "the first tree")
	checkTree(t, settled)

	t.Run("jobs", func(t *testing.T) {
		conf := writeFile(t, t.TempDir(), "volcano-scheduler.conf", schedulerConf(t))
		startVolcano(t, dir+"/vc-scheduler", "--scheduler-conf", conf, "--schedule-period", "500ms")
		ensureDefaultQueue(t, ctx)
		t.Run("still beside Volcano", func(t *testing.T) {
			t.Parallel()
			checkStill(t, ctx, settled, stillFor)
		})
		for _, jc := range jobCases {
			t.Run(jc.name, func(t *testing.T) {
				t.Parallel()
				runJob(t, ctx, jc)
			})
		}
	})
	if t.Failed() {
		return
	}
	if n := logLines(t, controllers, "Updated HyperNode status"); n == 0 {
		// A status update logs at -v=3: none at all would mean Volcano's HyperNode controller never ran, and
		// the stillness above proved nothing.
		t.Errorf("Volcano's HyperNode controller logged no status update: is it running?")
	}

	t.Run("a leaf change settles and stays still", func(t *testing.T) {
		moved := fabric[8] // span's ib-leaf-f1: its third node moves to ib-leaf-f2
		r := fabricReport(fabric[9], 3)
		r.Name = nodeName(moved, 3)
		var cur = fabricReport(moved, 3)
		must(t, "reading the report", c.Get(ctx, objectKey(cur.Name), cur))
		cur.Spec = r.Spec
		must(t, "moving "+cur.Name+" to "+fabric[9].name, c.Update(ctx, cur))
		testenv.Eventually(t, time.Minute, cur.Name+" below "+fabric[9].name, func() (bool, string) {
			hns := readHyperNodes(t, ctx)
			return slices.Contains(hns[fabric[9].name].nodes, cur.Name), fmt.Sprintf("%s holds %v", fabric[9].name, hns[fabric[9].name].nodes)
		})
		checkStill(t, ctx, waitSettled(t, ctx, "the tree after the move"), stillFor)
	})

	t.Run("Volcano's own discovery over fabricmap's nodes is reported and left alone", func(t *testing.T) {
		before := readHyperNodes(t, ctx)
		enableVolcanoLabelDiscovery(t, ctx)
		var theirs []string
		testenv.Eventually(t, 2*time.Minute, "Volcano's label discovery writes HyperNodes", func() (bool, string) {
			theirs = theirs[:0]
			for name, hn := range readHyperNodes(t, ctx) {
				if !hn.owned {
					theirs = append(theirs, name)
				}
			}
			return len(theirs) > 0, "none yet"
		})
		testenv.Eventually(t, time.Minute, "the aggregator reports them", func() (bool, string) {
			got := gauge(t, reg, "fabricmap_aggregator_foreign_hypernodes")
			events := leaseEvents(t, ctx, aggregator.ReasonForeignHyperNodes)
			ok := got > 0 && len(events) > 0 && strings.Contains(events[len(events)-1], "networkTopologyDiscovery")
			return ok, fmt.Sprintf("foreign_hypernodes %v, Events %q", got, events)
		})
		// The aggregator never deletes or edits them, and its own HyperNodes stay as they were.
		time.Sleep(5 * time.Second) // passes woken by Volcano's writes have run
		after := readHyperNodes(t, ctx)
		for _, name := range theirs {
			if _, ok := after[name]; !ok {
				t.Errorf("Volcano's HyperNode %s was deleted", name)
			}
		}
		for name, hn := range before {
			if hn.owned && after[name].nodes != nil && !slices.Equal(after[name].nodes, hn.nodes) {
				t.Errorf("fabricmap's HyperNode %s changed: %v, was %v", name, after[name].nodes, hn.nodes)
			}
		}
	})
}

// waitSettled waits until the tree holds every node of the fabric, Volcano has counted every HyperNode, and
// no HyperNode has been written for 10 s; it returns the HyperNodes then.
func waitSettled(t *testing.T, ctx context.Context, what string) map[string]hyperNodeState {
	t.Helper()
	nodes := 0
	for _, l := range fabric {
		nodes += len(l.nvlink)
	}
	var last map[string]hyperNodeState
	var since time.Time
	testenv.Eventually(t, 3*time.Minute, what+" settled", func() (bool, string) {
		cur := readHyperNodes(t, ctx)
		if len(cur["fabric"].nodes) != nodes {
			return false, fmt.Sprintf("the root holds %d nodes, want %d", len(cur["fabric"].nodes), nodes)
		}
		if !cmp.Equal(cur, last, cmp.AllowUnexported(hyperNodeState{})) {
			last, since = cur, time.Now()
			return false, "HyperNodes still written"
		}
		return time.Since(since) >= 10*time.Second, "settling"
	})
	return last
}

// checkStill fails when any HyperNode is written (its resourceVersion moves) within d.
func checkStill(t *testing.T, ctx context.Context, settled map[string]hyperNodeState, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		cur := readHyperNodes(t, ctx)
		var moved []string
		for name, hn := range cur {
			if settled[name].version != hn.version {
				moved = append(moved, fmt.Sprintf("%s %s→%s", name, settled[name].version, hn.version))
			}
		}
		if len(moved) > 0 {
			t.Fatalf("HyperNodes written after the tree settled (Volcano and the aggregator fighting?): %v", moved)
		}
	}
}

// checkTree checks the tiers the job cases rely on: NVLink domains tier 1, leaves tier 2, the root tier 3.
func checkTree(t *testing.T, hns map[string]hyperNodeState) {
	t.Helper()
	for _, l := range fabric {
		if hn, ok := hns[l.name]; !ok || hn.tier != 2 || !hn.owned {
			t.Fatalf("leaf HyperNode %s = %+v, want fabricmap's at tier 2", l.name, hn)
		}
	}
	if hns["fabric"].tier != 3 {
		t.Fatalf("root tier %d, want 3", hns["fabric"].tier)
	}
}

// ensureDefaultQueue creates Volcano's default queue, which its chart and webhook would otherwise provide.
func ensureDefaultQueue(t *testing.T, ctx context.Context) {
	t.Helper()
	q := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"weight": int64(1), "reclaimable": true},
	}}
	if err := testenv.Shared.Client.Create(ctx, q); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating Volcano's default queue: %v", err)
	}
}

// enableVolcanoLabelDiscovery turns on Volcano's own HyperNode discovery from node labels, pointed at
// fabricmap's leaf label, as a user who tries both would.
func enableVolcanoLabelDiscovery(t *testing.T, ctx context.Context) {
	t.Helper()
	conf := fmt.Sprintf(`networkTopologyDiscovery:
- source: label
  enabled: true
  interval: 5s
  config:
    networkTopologyTypes:
      fabric:
      - nodeLabel: %q
      - nodeLabel: "kubernetes.io/hostname"
`, leafKey)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: volcanoNamespace, Name: "volcano-controller-configmap"},
		Data: map[string]string{"volcano-controller.conf": conf}}
	must(t, "writing Volcano's controller ConfigMap", testenv.Shared.Client.Create(ctx, cm))
}

// gauge reads the value of the gauge name (without labels) from reg; 0 when it is not there.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	must(t, "gathering the aggregator's metrics", err)
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}
