package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testenv"
)

// fabricLabels returns the node's labels under the default fabricmap keys.
func fabricLabels(t *testing.T, name string) map[string]string {
	t.Helper()
	var n corev1.Node
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range hypernodegen.DefaultLabelKeys().All() {
		if v, ok := n.Labels[k]; ok {
			out[k] = v
		}
	}
	return out
}

func TestNodeLabelsFollowTheTree(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	block, spine, dc, acc := hypernodegen.DefaultTierKeys[0], hypernodegen.DefaultTierKeys[1], hypernodegen.DefaultTierKeys[2], hypernodegen.DefaultAcceleratorKey
	for _, n := range []string{"label-n1", "label-n2", "label-n3"} {
		createNode(t, n)
	}
	const domain = "8d1e0c5a-4bd2-4d6e-9f8a-3c2b1a0f9e8d.4"
	n1 := report("label-n1", "21")
	n1.Spec.NVLinkDomain = domain
	for _, rep := range []*v1alpha1.NodeFabricReport{n1, report("label-n2", "21"), report("label-n3", "22"), report("label-nonode", "22")} {
		upsertReport(t, rep)
	}
	labelWrites := func() float64 { return counterValue(r.Metrics.writes.WithLabelValues("node-labels")) }

	reconcileOnce(t, r)
	want := map[string]map[string]string{
		"label-n1": {block: "sw-21", spine: "fabric", acc: domain},
		"label-n2": {block: "sw-21", spine: "fabric"},
		"label-n3": {block: "sw-22", spine: "fabric"},
	}
	for n, w := range want {
		if diff := cmp.Diff(w, fabricLabels(t, n)); diff != "" {
			t.Errorf("%s labels (-want +got):\n%s", n, diff)
		}
	}
	if w := labelWrites(); w != 3 {
		t.Errorf("label writes = %v, want 3 (none for the report whose Node does not exist)", w)
	}

	t.Run("steady state and a restart write nothing", func(t *testing.T) {
		before := labelWrites()
		reconcileOnce(t, r)
		fresh := newReconciler(t, time.Minute, clock)
		reconcileOnce(t, fresh)
		if labelWrites() != before || counterValue(fresh.Metrics.writes.WithLabelValues("node-labels")) != 0 {
			t.Fatal("labels were rewritten although nothing changed")
		}
	})

	t.Run("a label an admin set is kept; labels fabricmap owns follow the node", func(t *testing.T) {
		var n2 corev1.Node
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: "label-n2"}, &n2); err != nil {
			t.Fatal(err)
		}
		n2.Labels[dc] = "dc-west" // by hand: fabricmap has no tier 3 here and must leave it
		if err := testenv.Shared.Client.Update(ctx, &n2); err != nil {
			t.Fatal(err)
		}
		upsertReport(t, report("label-n2", "22")) // n2 moves to the other leaf
		n1.Spec.NVLinkDomain = ""                 // n1's NVLink domain goes away
		upsertReport(t, n1)
		reconcileOnce(t, r)
		if diff := cmp.Diff(map[string]string{block: "sw-22", spine: "fabric", dc: "dc-west"}, fabricLabels(t, "label-n2")); diff != "" {
			t.Errorf("label-n2 labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{block: "sw-21", spine: "fabric"}, fabricLabels(t, "label-n1")); diff != "" {
			t.Errorf("label-n1 labels (-want +got):\n%s", diff)
		}
	})
}
