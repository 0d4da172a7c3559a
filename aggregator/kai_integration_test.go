package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
)

// TestKAITopologyOutput writes NVIDIA KAI Scheduler's Topology on the real API server with a CRD shaped as KAI's
// (testenv.InstallKAICRD): without the CRD the aggregator writes everything else, counts and says the missing
// API, and returns no error (no retry loop); with it, the Topology has the tree's levels, hostname last, and is
// written once; a deeper tree replaces it (KAI refuses changed levels); a new name prunes the old one; dropping
// the flag prunes the last; an admin's Topology is never touched; the CRD removed under a running aggregator fails
// no pass either.
func TestKAITopologyOutput(t *testing.T) {
	env := testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const ns = "fabricmap-kai"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	var logs bytes.Buffer
	// newR is an aggregator started with --kai-topology=name (empty: off) and a tree ConfigMap beside it.
	newR := func(name string, accelerators bool) *Reconciler {
		r := newReconciler(t, time.Minute, clock)
		r.Log = slog.New(slog.NewTextHandler(&logs, nil))
		r.Config.AcceleratorDomains = accelerators
		r.Config.Outputs = outputs.Options{KAITopology: name, TreeConfigMap: ns + "/fabricmap-tree"}
		return r
	}
	for i, sw := range []string{"71", "71", "72", "72"} {
		rep := report(fmt.Sprintf("kai-n%d", i), sw)
		rep.Spec.NVLinkDomain = fmt.Sprintf("5a1c6f4e-0000-4000-8000-00000000000%d.1", i/2)
		upsertReport(t, rep)
	}
	keys := hypernodegen.DefaultLabelKeys()
	kaiWrites := func(r *Reconciler, suffix string) float64 {
		return counterValue(r.Metrics.writes.WithLabelValues(outputs.NameKAITopology + suffix))
	}

	// No KAI CRD: the other outputs are written, the KAI one is counted and said, and no pass fails.
	r := newR("fabricmap-kai", false)
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	if got := counterValue(r.Metrics.outputErrors.WithLabelValues(outputs.NameKAITopology)); got != 2 {
		t.Errorf("KAI output errors without its CRD: %v, want 2 (one per pass)", got)
	}
	if got := counterValue(r.Metrics.writes.WithLabelValues(outputs.NameTreeConfigMap)); got != 1 {
		t.Errorf("tree ConfigMap writes without KAI's CRD: %v, want 1", got)
	}
	if len(hyperNodes(t)) == 0 {
		t.Error("no HyperNodes written while KAI's CRD is missing")
	}
	if said := logs.String(); !strings.Contains(said, "its API is not served (CRD not installed?)") || !strings.Contains(said, "output="+outputs.NameKAITopology) {
		t.Errorf("the missing KAI API was not said in the log:\n%s", said)
	}

	uninstallKAI := env.InstallKAICRD(t)
	admin := kaiTopology("admin-topology", nil, "example.com/rack", corev1.LabelHostname)
	if err := c.Create(ctx, admin); err != nil {
		t.Fatal(err)
	}

	// The CRD installed: a restarted aggregator writes the Topology once.
	r = newR("fabricmap-kai", false)
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	levels, uid := kaiLevels(t, "fabricmap-kai")
	if diff := cmp.Diff([]string{keys.Tiers[1], keys.Tiers[0], corev1.LabelHostname}, levels); diff != "" {
		t.Errorf("KAI Topology levels (-want +got):\n%s", diff)
	}
	if got := kaiWrites(r, ""); got != 1 {
		t.Errorf("KAI Topology writes over two passes: %v, want 1", got)
	}

	// KAI's schema refuses a change of the levels in place...
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(hypernodegen.KAITopologyGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: "fabricmap-kai"}, live); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"nodeLabel": keys.Tiers[0]}}, "spec", "levels")
	if err := c.Update(ctx, live); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changing the levels in place: %v, want the CRD's immutable refusal", err)
	}
	// ...so when NVLink domains become a tier, the aggregator deletes it and creates it with the new levels, once.
	r = newR("fabricmap-kai", true)
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	deeper, newUID := kaiLevels(t, "fabricmap-kai")
	if diff := cmp.Diff([]string{keys.Tiers[1], keys.Tiers[0], keys.Accelerator, keys.AcceleratorSubDomain, corev1.LabelHostname}, deeper); diff != "" {
		t.Errorf("KAI Topology levels after NVLink domains became a tier (-want +got):\n%s", diff)
	}
	if newUID == uid {
		t.Errorf("the Topology kept its UID %s: it was not replaced", uid)
	}
	if got := kaiWrites(r, "-replace"); got != 1 {
		t.Errorf("replacements: %v, want 1", got)
	}
	if got := counterValue(r.Metrics.outputErrors.WithLabelValues(outputs.NameKAITopology)); got != 0 {
		t.Errorf("output errors: %v, want 0 (no error loop on the immutable levels)", got)
	}

	// A new name: the new Topology is written and the old one pruned.
	r = newR("fabricmap-kai-2", true)
	reconcileOnce(t, r)
	if renamed, _ := kaiLevels(t, "fabricmap-kai-2"); !cmp.Equal(renamed, deeper) {
		t.Errorf("renamed Topology levels %v, want %v", renamed, deeper)
	}
	if got := kaiNames(t); !cmp.Equal(got, []string{"admin-topology", "fabricmap-kai-2"}) {
		t.Errorf("KAI Topologies after the rename: %v, want the admin's and the new one", got)
	}

	// The flag dropped: fabricmap's Topology is pruned, the admin's stays, and later passes do nothing more.
	r = newR("", true)
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	if got := kaiNames(t); !cmp.Equal(got, []string{"admin-topology"}) {
		t.Errorf("KAI Topologies after --kai-topology was dropped: %v, want only the admin's", got)
	}
	if got := kaiWrites(r, "-delete"); got != 1 {
		t.Errorf("prune deletions: %v, want 1", got)
	}

	// KAI's CRD removed under a running aggregator (whose client still maps the kind): every pass, with the
	// output on or off, ends without an error; the missing API is counted and said.
	r = newR("fabricmap-kai", true)
	reconcileOnce(t, r)
	if got := kaiNames(t); !cmp.Equal(got, []string{"admin-topology", "fabricmap-kai"}) {
		t.Fatalf("KAI Topologies with the flag back: %v", got)
	}
	uninstallKAI()
	logs.Reset()
	reconcileOnce(t, r)
	reconcileOnce(t, r)
	if got := counterValue(r.Metrics.outputErrors.WithLabelValues(outputs.NameKAITopology)); got != 2 {
		t.Errorf("KAI output errors once its CRD is gone: %v, want 2 (one per pass)", got)
	}
	if said := logs.String(); !strings.Contains(said, "its API is not served") {
		t.Errorf("the removed KAI API was not said in the log:\n%s", said)
	}
	reconcileOnce(t, newR("", true))
}

// kaiTopology is a KAI Topology named name with labels and the levels keys.
func kaiTopology(name string, labels map[string]string, keys ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(hypernodegen.KAITopologyGVK)
	u.SetName(name)
	u.SetLabels(labels)
	levels := make([]any, len(keys))
	for i, k := range keys {
		levels[i] = map[string]any{"nodeLabel": k}
	}
	u.Object["spec"] = map[string]any{"levels": levels}
	return u
}

// kaiLevels returns the node-label keys of KAI Topology name's levels and its UID.
func kaiLevels(t *testing.T, name string) ([]string, string) {
	t.Helper()
	u := getUnstructured(t, hypernodegen.KAITopologyGVK.GroupVersion().String(), "Topology", "", name)
	items, _, _ := unstructured.NestedSlice(u.Object, "spec", "levels")
	var out []string
	for _, l := range items {
		out = append(out, l.(map[string]any)["nodeLabel"].(string))
	}
	return out, string(u.GetUID())
}

// kaiNames lists the names of the KAI Topologies, sorted.
func kaiNames(t *testing.T) []string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(hypernodegen.KAITopologyGVK.GroupVersion().WithKind("TopologyList"))
	if err := testenv.Shared.Client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range list.Items {
		out = append(out, u.GetName())
	}
	return out
}
