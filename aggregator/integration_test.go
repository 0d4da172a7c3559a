package aggregator

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/fixture"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fakeClock is a settable clock for the grace period.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// newReconciler returns a reconciler that reads and writes the real API server directly (no cache), so each
// Reconcile call sees every write before it.
func newReconciler(t *testing.T, grace time.Duration, clock *fakeClock) *Reconciler {
	t.Helper()
	c := testenv.Shared.Client
	return &Reconciler{
		Client: c, Live: c, NodeWriter: nodeWriter(t),
		Config: Config{Inference: pipeline.Inference{RootName: "fabric"}, DeleteGracePeriod: grace, NodeLabels: true,
			LabelKeys: hypernodegen.DefaultLabelKeys()},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: NewMetrics(prometheus.NewRegistry()),
		Now:     clock.now,
	}
}

// nodeWriter is the node-label writer the manager gives the reconciler (NewNodeWriter), for the test API server.
func nodeWriter(t *testing.T) rest.Interface {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(testenv.Shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewNodeWriter(testenv.Shared.Config, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// report is node's report with an LLDP neighbour per switch suffix (fixture.LLDPReport).
func report(node string, switches ...string) *v1alpha1.NodeFabricReport {
	return fixture.LLDPReport(node, switches...)
}

// upsertReport creates or replaces a report's spec.
func upsertReport(t *testing.T, r *v1alpha1.NodeFabricReport) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Shared.Client
	var cur v1alpha1.NodeFabricReport
	err := c.Get(ctx, client.ObjectKey{Name: r.Name}, &cur)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, r.DeepCopy()); err != nil {
			t.Fatalf("creating report %s: %v", r.Name, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = r.Spec
	if err := c.Update(ctx, &cur); err != nil {
		t.Fatalf("updating report %s: %v", r.Name, err)
	}
}

func deleteAll(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Shared.Client
	if err := c.DeleteAllOf(ctx, &v1alpha1.NodeFabricReport{}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteAllOf(ctx, &topologyv1alpha1.HyperNode{}); err != nil {
		t.Fatal(err)
	}
}

// hyperNodes returns name -> sorted member names of all HyperNodes.
func hyperNodes(t *testing.T) map[string][]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return memberNames(list.Items)
}

// memberNames returns name -> sorted member names of HyperNodes whose members are all chosen by exact name.
func memberNames(hns []topologyv1alpha1.HyperNode) map[string][]string {
	out := map[string][]string{}
	for _, hn := range hns {
		var members []string
		for _, m := range hn.Spec.Members {
			members = append(members, m.Selector.ExactMatch.Name)
		}
		sort.Strings(members)
		out[hn.Name] = members
	}
	return out
}

func reconcileOnce(t *testing.T, r *Reconciler) time.Duration {
	t.Helper()
	res, err := r.Reconcile(context.Background(), Request)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res.RequeueAfter
}

func writes(r *Reconciler) float64 {
	total := 0.0
	for _, kind := range []string{"apply", "status", "delete"} {
		total += counterValue(r.Metrics.writes.WithLabelValues(kind))
	}
	return total
}

func TestReportsBecomeHyperNodes(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	for _, rep := range []*v1alpha1.NodeFabricReport{report("n1", "01"), report("n2", "01"), report("n3", "02"), report("n4")} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)
	want := map[string][]string{
		"fabric": {"sw-01", "sw-02"},
		"sw-01":  {"n1", "n2"},
		"sw-02":  {"n3"},
	}
	if got := hyperNodes(t); !equal(got, want) {
		t.Fatalf("HyperNodes = %v, want %v", got, want)
	}
	var hn topologyv1alpha1.HyperNode
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: "fabric"}, &hn); err != nil {
		t.Fatal(err)
	}
	if hn.Spec.Tier != 2 || hn.Status.NodeCount != 3 || hn.Labels[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
		t.Errorf("root HyperNode = tier %d, nodeCount %d, labels %v", hn.Spec.Tier, hn.Status.NodeCount, hn.Labels)
	}

	t.Run("steady state writes nothing", func(t *testing.T) {
		before := writes(r)
		reconcileOnce(t, r)
		if after := writes(r); after != before {
			t.Fatalf("a second reconcile with nothing changed wrote %v times", after-before)
		}
	})

	t.Run("a restarted aggregator writes nothing", func(t *testing.T) {
		fresh := newReconciler(t, time.Minute, clock)
		reconcileOnce(t, fresh)
		if w := writes(fresh); w != 0 {
			t.Fatalf("a fresh reconciler wrote %v times over an up-to-date cluster", w)
		}
	})

	t.Run("a node moves leaf: domains follow, the emptied one waits for the grace period below the root", func(t *testing.T) {
		upsertReport(t, report("n3", "01"))
		requeue := reconcileOnce(t, r)
		got := hyperNodes(t)
		if !equal(got["sw-01"], []string{"n1", "n2", "n3"}) || !equal(got["fabric"], []string{"sw-01", "sw-02"}) {
			t.Fatalf("after the move: %v", got)
		}
		if members, kept := got["sw-02"]; !kept || len(members) != 0 {
			t.Fatalf("sw-02 = %v (kept %v), want it kept, empty (n3 is in sw-01 now), until its grace period ends", members, kept)
		}
		if requeue <= 0 || requeue > time.Minute {
			t.Fatalf("requeue after %v, want within the grace period", requeue)
		}
		clock.t = clock.t.Add(61 * time.Second)
		reconcileOnce(t, r)
		got = hyperNodes(t)
		if _, kept := got["sw-02"]; kept {
			t.Fatal("sw-02 still exists after the grace period")
		}
		if !equal(got["fabric"], []string{"sw-01"}) {
			t.Fatalf("the root still lists the deleted sw-02: %v", got)
		}
	})

	t.Run("a flip and back within the grace period deletes nothing", func(t *testing.T) {
		upsertReport(t, report("n3", "03"))
		reconcileOnce(t, r)
		clock.t = clock.t.Add(30 * time.Second)
		upsertReport(t, report("n3", "01"))
		reconcileOnce(t, r)
		clock.t = clock.t.Add(45 * time.Second)
		reconcileOnce(t, r) // sw-03 has now been absent 45s < 60s... and then more
		clock.t = clock.t.Add(20 * time.Second)
		reconcileOnce(t, r)
		got := hyperNodes(t)
		if _, ok := got["sw-01"]; !ok {
			t.Fatalf("sw-01 was deleted during a flip: %v", got)
		}
		if _, ok := got["sw-03"]; ok {
			t.Fatalf("sw-03 outlived its grace period: %v", got)
		}
	})
}

func TestForeignHyperNodesAreLeftAlone(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	foreign := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "sw-01"},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{
			Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "other"}}}}}}
	unrelated := foreign.DeepCopy()
	unrelated.Name = "made-by-someone-else"
	for _, hn := range []*topologyv1alpha1.HyperNode{foreign, unrelated} {
		if err := c.Create(ctx, hn); err != nil {
			t.Fatal(err)
		}
	}
	upsertReport(t, report("n1", "01"))
	r := newReconciler(t, 0, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	reconcileOnce(t, r)
	got := hyperNodes(t)
	if !equal(got["sw-01"], []string{"other"}) {
		t.Errorf("a foreign HyperNode with a name fabricmap wanted was changed: %v", got["sw-01"])
	}
	if !equal(got["made-by-someone-else"], []string{"other"}) {
		t.Errorf("an unrelated HyperNode was touched: %v", got)
	}
	if counterValue(r.Metrics.nameConflicts) != 1 {
		t.Errorf("name conflict not counted")
	}
}

func TestMalformedReportIsRejectedByTheSchema(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	bad := report("schema-check", "01")
	bad.Spec.Neighbors[0].ChassisID = "" // minLength 1
	if err := c.Create(ctx, bad); err == nil || !apierrors.IsInvalid(err) {
		t.Fatalf("a report with an empty chassis ID was not refused as invalid: %v", err)
	}
	wrongType := map[string]any{
		"apiVersion": "fabricmap.io/v1alpha1", "kind": "NodeFabricReport",
		"metadata": map[string]any{"name": "schema-check"},
		"spec":     map[string]any{"gpuCount": "eight"},
	}
	if err := createUnstructured(ctx, wrongType); err == nil || !strings.Contains(err.Error(), "gpuCount") {
		t.Fatalf("a report with a string gpuCount was not refused: %v", err)
	}
}

func TestInvalidHyperNodeIsRejectedByTheRealAPIServer(t *testing.T) {
	testenv.Require(t)
	hn := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "two-selectors"},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1, Members: []topologyv1alpha1.MemberSpec{{
			Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{
				ExactMatch: &topologyv1alpha1.ExactMatch{Name: "n1"},
				RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "n.*"},
			}}}}}
	err := testenv.Shared.Client.Create(context.Background(), hn)
	if err == nil || !strings.Contains(err.Error(), "Only one of ExactMatch, RegexMatch, or LabelMatch") {
		t.Fatalf("the API server accepted a member with two selectors (err %v): its CEL validation is not in force", err)
	}
}

func TestReportMayBeOwnedByItsNode(t *testing.T) {
	testenv.Require(t)
	// The agent sets an owner reference to the Node; garbage collection itself needs kube-controller-manager,
	// which this control plane does not run, so this checks the reference the collector relies on.
	ctx := context.Background()
	c := testenv.Shared.Client
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "owner-check"}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	rep := report("owner-check", "01")
	rep.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	if err := c.Create(ctx, rep); err != nil {
		t.Fatalf("a report owned by its Node was refused: %v", err)
	}
}

func equal(a, b any) bool {
	switch x := a.(type) {
	case []string:
		y := b.([]string)
		return strings.Join(x, ",") == strings.Join(y, ",")
	case map[string][]string:
		y := b.(map[string][]string)
		if len(x) != len(y) {
			return false
		}
		for k := range x {
			if !equal(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return false
}
