package aggregator

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestOutputsAreOwnedNotAdopted: a ConfigMap an output names that someone else created first (with an extra
// key, say a plugstack.conf for slurm.conf's include folder) is never taken over: not written, counted, and
// left exactly as it was. Once it is gone the aggregator creates its own; and keys or binaryData added later to
// fabricmap's own ConfigMap are removed at the next pass: what it writes is the whole content.
func TestOutputsAreOwnedNotAdopted(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	const ns, name = "fabricmap-owned", "fabricmap-tree"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	planted := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string]string{"plugstack.conf": "required /tmp/evil.so\n"}}
	if err := c.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}) })
	for _, rep := range []*v1alpha1.NodeFabricReport{report("own-n1", "41"), report("own-n2", "41")} {
		upsertReport(t, rep)
	}
	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	r.Config.Outputs = outputs.Options{TreeConfigMap: ns + "/" + name}
	read := func() *corev1.ConfigMap {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		return &cm
	}

	if _, err := r.Reconcile(ctx, Request); err != nil {
		t.Fatalf("a foreign output object failed the pass: %v", err)
	}
	got := read()
	if got.ResourceVersion != planted.ResourceVersion || got.Labels != nil {
		t.Errorf("the planted ConfigMap was written: labels %v, data %v", got.Labels, got.Data)
	}
	if v := gaugeValue(t, r.Metrics.foreignOutputs.WithLabelValues(outputs.NameTreeConfigMap)); v != 1 {
		t.Errorf("fabricmap_aggregator_foreign_outputs{output=tree-configmap} = %v, want 1", v)
	}

	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	mine := read()
	if mine.Labels[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
		t.Fatalf("the aggregator's own ConfigMap has no ownership label: %v", mine.Labels)
	}
	want := maps.Clone(mine.Data)
	if v := gaugeValue(t, r.Metrics.foreignOutputs.WithLabelValues(outputs.NameTreeConfigMap)); v != 0 {
		t.Errorf("after it was removed: foreign_outputs = %v, want 0", v)
	}

	mine.Data["plugstack.conf"] = "required /tmp/evil.so\n"
	mine.BinaryData = map[string][]byte{"evil.so": {0x7f, 'E', 'L', 'F'}}
	if err := c.Update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	after := read()
	if diff := cmp.Diff(want, after.Data); diff != "" || len(after.BinaryData) > 0 {
		t.Errorf("keys added to fabricmap's ConfigMap survived a pass: binaryData %v, data (-want +got):\n%s", after.BinaryData, diff)
	}
	before := writes(r) + counterValue(r.Metrics.writes.WithLabelValues(outputs.NameTreeConfigMap))
	reconcileOnce(t, r)
	if w := writes(r) + counterValue(r.Metrics.writes.WithLabelValues(outputs.NameTreeConfigMap)); w != before {
		t.Errorf("a steady pass wrote %v times", w-before)
	}
}
