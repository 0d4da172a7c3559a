package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
)

// TestOutputsFollowTheTree writes the ClusterNetworkTopology, the Kueue Topology and the tree ConfigMap from
// reports, on the real API server with the real CRDs: right content, no write when nothing changed (also for
// a restarted aggregator), one write per changed object, and an empty tree leaves them as they were.
func TestOutputsFollowTheTree(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	ns := &corev1.Namespace{}
	ns.Name = "fabricmap-outputs"
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	newR := func() *Reconciler {
		r := newReconciler(t, time.Minute, clock)
		r.Config.Outputs = outputs.Options{ClusterNetworkTopology: true, KueueTopology: "fabricmap", TreeConfigMap: "fabricmap-outputs/fabricmap-tree"}
		return r
	}
	r := newR()
	for _, rep := range []*v1alpha1.NodeFabricReport{report("out-n1", "31"), report("out-n2", "31"), report("out-n3", "32")} {
		upsertReport(t, rep)
	}
	outputWrites := func(r *Reconciler) float64 {
		total := 0.0
		for _, k := range []string{"cluster-network-topology", "kueue-topology", "tree-configmap"} {
			total += counterValue(r.Metrics.writes.WithLabelValues(k))
		}
		return total
	}

	reconcileOnce(t, r)
	if got := outputWrites(r); got != 3 {
		t.Fatalf("first reconcile wrote %v outputs, want 3", got)
	}
	keys := hypernodegen.DefaultLabelKeys()
	cnt := getUnstructured(t, hypernodegen.ClusterNetworkTopologyGVK.GroupVersion().String(), "ClusterNetworkTopology", "", hypernodegen.ClusterNetworkTopologyName)
	layers, _, _ := unstructured.NestedSlice(cnt.Object, "spec", "networkTopologySpec")
	var labelKeys []string
	for _, l := range layers {
		if k, ok := l.(map[string]any)["labelKey"].([]any); ok {
			labelKeys = append(labelKeys, k[0].(string))
		}
	}
	// Two leaves under the root: the leaf tier (block key) and the root (spine key), top first.
	if diff := cmp.Diff([]string{keys.Tiers[1], keys.Tiers[0]}, labelKeys); diff != "" {
		t.Errorf("ClusterNetworkTopology label keys (-want +got):\n%s", diff)
	}
	kt := getUnstructured(t, "kueue.x-k8s.io/v1beta2", "Topology", "", "fabricmap")
	levels, _, _ := unstructured.NestedSlice(kt.Object, "spec", "levels")
	var got []string
	for _, l := range levels {
		got = append(got, l.(map[string]any)["nodeLabel"].(string))
	}
	if diff := cmp.Diff([]string{keys.Tiers[1], keys.Tiers[0], corev1.LabelHostname}, got); diff != "" {
		t.Errorf("Kueue Topology levels (-want +got):\n%s", diff)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fabricmap-outputs", Name: "fabricmap-tree"}, &cm); err != nil {
		t.Fatal(err)
	}
	var entries []hypernodegen.TreeConfigMapEntry
	if err := json.Unmarshal([]byte(cm.Data[hypernodegen.TreeConfigMapKey]), &entries); err != nil {
		t.Fatalf("tree ConfigMap: %v", err)
	}
	if len(entries) != 3 {
		t.Errorf("tree ConfigMap has %d domains, want 3 (two leaves and the root): %+v", len(entries), entries)
	}

	reconcileOnce(t, r)
	reconcileOnce(t, newR())
	if got := outputWrites(r); got != 3 {
		t.Errorf("unchanged tree: %v output writes in all, want still 3", got)
	}

	// A third leaf changes the ConfigMap only: the tiers, so the CNT and Kueue levels, stay the same.
	upsertReport(t, report("out-n4", "33"))
	reconcileOnce(t, r)
	if got := outputWrites(r); got != 4 {
		t.Errorf("a new leaf: %v output writes in all, want 4 (the ConfigMap)", got)
	}

	// Every report gone: the tree is empty and the outputs keep their last good content.
	deleteAll(t)
	before := cm.Data[hypernodegen.TreeConfigMapKey]
	reconcileOnce(t, r)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fabricmap-outputs", Name: "fabricmap-tree"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[hypernodegen.TreeConfigMapKey] == "" || cm.Data[hypernodegen.TreeConfigMapKey] == "[]" {
		t.Errorf("an empty tree emptied the tree ConfigMap (was %d bytes)", len(before))
	}
	if got := counterValue(r.Metrics.outputErrors.WithLabelValues("tree-configmap")); got == 0 {
		t.Error("an unwritable tree was not counted as an output error")
	}
}

func getUnstructured(t *testing.T, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatalf("reading %s %s: %v", kind, name, err)
	}
	return u
}

// TestKueueTopologyReplacedWhenLevelsChange changes the tree's depth under a written Kueue Topology (NVLink
// domains become a tier): the real CRD refuses any change of spec.levels, so the aggregator deletes the
// Topology and creates it with the new levels once, rather than failing on every pass.
func TestKueueTopologyReplacedWhenLevelsChange(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	newR := func(accelerators bool) *Reconciler {
		r := newReconciler(t, time.Minute, clock)
		r.Config.AcceleratorDomains = accelerators
		r.Config.NodeLabels = true
		r.Config.Outputs = outputs.Options{KueueTopology: "fabricmap-replace"}
		return r
	}
	for i, sw := range []string{"61", "61", "62", "62"} {
		rep := report(fmt.Sprintf("kueue-n%d", i), sw)
		rep.Spec.NVLinkDomain = fmt.Sprintf("9d0c6f4e-0000-4000-8000-00000000000%d.1", i/2)
		upsertReport(t, rep)
	}
	levels := func() ([]string, string) {
		kt := getUnstructured(t, "kueue.x-k8s.io/v1beta2", "Topology", "", "fabricmap-replace")
		ls, _, _ := unstructured.NestedSlice(kt.Object, "spec", "levels")
		var got []string
		for _, l := range ls {
			got = append(got, l.(map[string]any)["nodeLabel"].(string))
		}
		return got, string(kt.GetUID())
	}
	reconcileOnce(t, newR(false))
	before, uid := levels()

	r := newR(true)
	reconcileOnce(t, r)
	after, newUID := levels()
	keys := hypernodegen.DefaultLabelKeys()
	if len(after) != len(before)+2 || !slices.Contains(after, keys.Accelerator) || !slices.Contains(after, keys.AcceleratorSubDomain) {
		t.Fatalf("levels after NVLink domains became a tier: %v, want %v with %s and %s added", after, before, keys.Accelerator, keys.AcceleratorSubDomain)
	}
	if newUID == uid {
		t.Errorf("the Topology kept its UID %s: it was not replaced", uid)
	}
	if got := counterValue(r.Metrics.writes.WithLabelValues("kueue-topology-replace")); got != 1 {
		t.Errorf("replacements counted: %v, want 1", got)
	}
	if got := counterValue(r.Metrics.outputErrors.WithLabelValues("kueue-topology")); got != 0 {
		t.Errorf("output errors: %v, want 0 (no error loop on the immutable levels)", got)
	}
	reconcileOnce(t, r)
	if got := counterValue(r.Metrics.writes.WithLabelValues("kueue-topology")); got != 1 {
		t.Errorf("Kueue Topology writes after an unchanged pass: %v, want still 1", got)
	}
}
