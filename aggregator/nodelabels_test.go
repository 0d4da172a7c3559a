package aggregator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
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
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	tier0, tier1, tier2 := hypernodegen.DefaultTierKeys[0], hypernodegen.DefaultTierKeys[1], hypernodegen.DefaultTierKeys[2]
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
		"label-n1": {tier0: "sw-21", tier1: "fabric"}, // no NVLink label without --accelerator-domains (nvlinkleftout_test.go)
		"label-n2": {tier0: "sw-21", tier1: "fabric"},
		"label-n3": {tier0: "sw-22", tier1: "fabric"},
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
		setLabel(t, "label-n2", tier2, "dc-west") // by hand: the tree has no third switch tier; fabricmap must leave it
		upsertReport(t, report("label-n2", "22")) // n2 moves to the other leaf
		n1.Spec.NVLinkDomain = ""                 // n1's NVLink domain goes away
		upsertReport(t, n1)
		reconcileOnce(t, r)
		if diff := cmp.Diff(map[string]string{tier0: "sw-22", tier1: "fabric", tier2: "dc-west"}, fabricLabels(t, "label-n2")); diff != "" {
			t.Errorf("label-n2 labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{tier0: "sw-21", tier1: "fabric"}, fabricLabels(t, "label-n1")); diff != "" {
			t.Errorf("label-n1 labels (-want +got):\n%s", diff)
		}
	})
}

// setLabel sets (or, with value "", removes) a label on a Node as an admin would, by an update under the test
// client's own field manager.
func setLabel(t *testing.T, node, key, value string) {
	t.Helper()
	ctx := context.Background()
	var n corev1.Node
	if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if value == "" {
		delete(n.Labels, key)
	} else {
		n.Labels[key] = value
	}
	if err := testenv.Shared.Client.Update(ctx, &n, client.FieldOwner("admin")); err != nil {
		t.Fatal(err)
	}
}

// A label under a key fabricmap writes that fabricmap did not set (an admin's, another tool's) is never
// overwritten, whether it was there first or replaced fabricmap's own value: fabricmap's other labels on the
// node still follow the tree, and each such label is a Warning Event on its Node and counted by key. Once
// the admin removes it, fabricmap writes the key again and owns it.
func TestNodeLabelsNotOwnedAreLeftAlone(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	var events eventLog
	r.Events = &events
	keys := hypernodegen.DefaultLabelKeys()
	leaf, top := keys.Tiers[0], keys.Tiers[1] // no NVLink label without --accelerator-domains, whatever n1 reports
	createNode(t, "foreign-n1")
	createNode(t, "foreign-n2")
	setLabel(t, "foreign-n2", leaf, "rack-7") // before fabricmap ever labelled the node
	n1 := report("foreign-n1", "41")
	n1.Spec.NVLinkDomain = "5b1e0c5a-4bd2-4d6e-9f8a-3c2b1a0f9e8d.1"
	upsertReport(t, n1)
	upsertReport(t, report("foreign-n2", "42"))
	labelWrites := func() float64 { return counterValue(r.Metrics.writes.WithLabelValues("node-labels")) }
	conflicts := func() map[string]float64 {
		out := map[string]float64{}
		for _, k := range keys.All() {
			out[k] = gaugeValue(t, r.Metrics.labelConflicts.WithLabelValues(k))
		}
		return out
	}
	wantConflicts := func(n float64) map[string]float64 {
		out := map[string]float64{}
		for _, k := range keys.All() {
			out[k] = 0
		}
		out[leaf] = n
		return out
	}
	check := func(t *testing.T, want map[string]map[string]string) {
		t.Helper()
		for n, w := range want {
			if diff := cmp.Diff(w, fabricLabels(t, n)); diff != "" {
				t.Errorf("%s labels (-want +got):\n%s", n, diff)
			}
		}
	}

	reconcileOnce(t, r)
	check(t, map[string]map[string]string{
		"foreign-n1": {leaf: "sw-41", top: "fabric"},
		"foreign-n2": {leaf: "rack-7", top: "fabric"},
	})
	if diff := cmp.Diff(wantConflicts(1), conflicts()); diff != "" {
		t.Errorf("label conflicts by key (-want +got):\n%s", diff)
	}
	wantEvent := "Node/foreign-n2 Warning LabelNotOwned: node labels not set by fabricmap (field manager fabricmap-aggregator-labels) left as they are: " +
		leaf + "=rack-7 (fabricmap's value: sw-42)"
	if diff := cmp.Diff([]string{wantEvent}, []string(events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	t.Run("steady state writes nothing", func(t *testing.T) {
		before := labelWrites()
		reconcileOnce(t, r)
		if got := labelWrites(); got != before {
			t.Errorf("label writes = %v, want %v: a label left alone must not cost a write every pass", got, before)
		}
	})

	t.Run("an admin's value over fabricmap's survives; fabricmap's other labels still follow the tree", func(t *testing.T) {
		setLabel(t, "foreign-n1", leaf, "maintenance")
		n1.Spec.NVLinkDomain = "5b1e0c5a-4bd2-4d6e-9f8a-3c2b1a0f9e8d.2"
		n1.Spec.Neighbors = report("foreign-n1", "42").Spec.Neighbors // to the other leaf
		upsertReport(t, n1)
		events = nil
		reconcileOnce(t, r)
		check(t, map[string]map[string]string{
			"foreign-n1": {leaf: "maintenance", top: "fabric"},
			"foreign-n2": {leaf: "rack-7", top: "fabric"},
		})
		if diff := cmp.Diff(wantConflicts(2), conflicts()); diff != "" {
			t.Errorf("label conflicts by key (-want +got):\n%s", diff)
		}
		if len(events) != 2 || !strings.Contains(events[0], "Node/foreign-n1 Warning LabelNotOwned") ||
			!strings.Contains(events[0], leaf+"=maintenance (fabricmap's value: sw-42)") {
			t.Errorf("events = %q, want one LabelNotOwned on each node, foreign-n1's naming its label", events)
		}
	})

	t.Run("once the admin removes the label fabricmap writes and owns it again", func(t *testing.T) {
		setLabel(t, "foreign-n1", leaf, "")
		setLabel(t, "foreign-n2", leaf, "")
		events = nil
		reconcileOnce(t, r)
		upsertReport(t, report("foreign-n2", "41"))
		reconcileOnce(t, r)
		check(t, map[string]map[string]string{
			"foreign-n1": {leaf: "sw-42", top: "fabric"},
			"foreign-n2": {leaf: "sw-41", top: "fabric"},
		})
		if diff := cmp.Diff(wantConflicts(0), conflicts()); diff != "" {
			t.Errorf("label conflicts by key (-want +got):\n%s", diff)
		}
		if len(events) != 0 {
			t.Errorf("events = %q, want none", events)
		}
	})
}

// A pass whose cache does not show the last label write yet (under load the Node watch lags the writes, and
// a Node's events bring no pass) does not send the same write again; a different wish is written at once, and
// the write seen ends the hold.
func TestNodeLabelsNotRewrittenWhileTheCacheLags(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	leaf := hypernodegen.DefaultTierKeys[0]
	const n = "label-lag-1"
	createNode(t, n)
	read := func() *metav1.PartialObjectMetadata {
		var m metav1.PartialObjectMetadata
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: n}, &m); err != nil {
			t.Fatal(err)
		}
		return &m
	}
	stale := read()
	labelWrites := func() float64 { return counterValue(r.Metrics.writes.WithLabelValues("node-labels")) }
	sync := func(value string, cached *metav1.PartialObjectMetadata) float64 {
		before := labelWrites()
		nodes := map[string]*metav1.PartialObjectMetadata{n: cached}
		lw := &r.stageWrite().labels
		wish := lw.nodeLabelWish(map[string]map[string]string{n: {leaf: value}}, map[string]bool{n: true}, nil, nodes)
		if _, err := lw.syncNodeLabels(ctx, wish, nodes); err != nil {
			t.Fatal(err)
		}
		return labelWrites() - before
	}
	type step struct {
		What   string
		Writes float64
	}
	got := []step{
		{"first write", sync("sw-1", stale)},
		{"the same wish, the cache still behind", sync("sw-1", stale)},
		{"another wish, the cache still behind", sync("sw-2", stale)},
		{"the same wish, the write seen", sync("sw-2", read())},
	}
	want := []step{
		{"first write", 1},
		{"the same wish, the cache still behind", 0},
		{"another wish, the cache still behind", 1},
		{"the same wish, the write seen", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("label writes per pass (-want +got):\n%s", diff)
	}
	if got := fabricLabels(t, n)[leaf]; got != "sw-2" {
		t.Errorf("the node's leaf label = %q, want sw-2", got)
	}
	if kept := len(r.stageWrite().labels.written.written); kept != 0 {
		t.Errorf("%d nodes' writes still remembered once the cache shows them, want none", kept)
	}
}
