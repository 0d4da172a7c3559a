package aggregator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// ownedHyperNodeList returns every HyperNode fabricmap owns on the API server.
func ownedHyperNodeList(t *testing.T) []topologyv1alpha1.HyperNode {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// checkOneTree fails the test unless the HyperNodes on the API server form one tree: a single root (no
// HyperNode that no other lists, but one), every HyperNode member an existing HyperNode listed by one parent,
// every node in one HyperNode at most.
func checkOneTree(t *testing.T, when string) {
	t.Helper()
	hns := ownedHyperNodeList(t)
	if len(hns) == 0 {
		return
	}
	if roots := rootsOf(hns); len(roots) != 1 {
		t.Errorf("%s: the HyperNodes have %d roots %v, want one: %v", when, len(roots), roots, memberNames(hns))
	}
	exists := map[string]bool{}
	for _, h := range hns {
		exists[h.Name] = true
	}
	parents, holders := map[string][]string{}, map[string][]string{}
	for _, h := range hns {
		for _, m := range h.Spec.Members {
			name := m.Selector.ExactMatch.Name
			if m.Type == topologyv1alpha1.MemberTypeHyperNode {
				parents[name] = append(parents[name], h.Name)
				if !exists[name] {
					t.Errorf("%s: HyperNode %s lists %s, which does not exist", when, h.Name, name)
				}
			} else {
				holders[name] = append(holders[name], h.Name)
			}
		}
	}
	for c, ps := range parents {
		if len(ps) > 1 {
			t.Errorf("%s: HyperNode %s has %d parents %v", when, c, len(ps), ps)
		}
	}
	for n, hs := range holders {
		if len(hs) > 1 {
			t.Errorf("%s: node %s is in %d HyperNodes %v", when, n, len(hs), hs)
		}
	}
}

// TestShrinkingLeafNeverBecomesASecondRoot: a leaf whose nodes lose their uplink evidence one by one shrinks,
// then leaves the tree; its HyperNode waits for the grace period below the root, holding the node that lost its
// uplinks last, and is deleted once it is over: at no pass is it a second root beside the tree's.
func TestShrinkingLeafNeverBecomesASecondRoot(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, 10*time.Minute, clock)
	for _, rep := range []*v1alpha1.NodeFabricReport{report("sl-1", "a1"), report("sl-2", "a1"), report("sl-3", "a1"), report("sl-4", "a2"), report("sl-5", "a2")} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)
	checkOneTree(t, "at first")
	for i, n := range []string{"sl-1", "sl-2", "sl-3"} {
		clock.t = clock.t.Add(time.Minute)
		upsertReport(t, report(n)) // its report names no switch any more
		reconcileOnce(t, r)
		checkOneTree(t, fmt.Sprintf("after %d nodes of sw-a1 lost their uplinks", i+1))
	}
	want := map[string][]string{"fabric": {"sw-a1", "sw-a2"}, "sw-a1": {"sl-3"}, "sw-a2": {"sl-4", "sl-5"}}
	if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
		t.Errorf("HyperNodes within the grace period (-want +got):\n%s", diff)
	}
	clock.t = clock.t.Add(10*time.Minute + time.Second)
	reconcileOnce(t, r)
	checkOneTree(t, "after the grace period")
	want = map[string][]string{"fabric": {"sw-a2"}, "sw-a2": {"sl-4", "sl-5"}}
	if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
		t.Errorf("HyperNodes after the grace period (-want +got):\n%s", diff)
	}
}

// nodeObject returns the Node called name from the API server.
func nodeObject(t *testing.T, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// clusterHealth judges the cluster as `fabricmap get health` does, from what is on the API server: the reports,
// fabricmap's HyperNodes and the Nodes' uplink-lost and switch-lost annotations.
func clusterHealth(t *testing.T) health.Assessment {
	t.Helper()
	ctx := context.Background()
	var reports v1alpha1.NodeFabricReportList
	if err := testenv.Shared.Client.List(ctx, &reports); err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList
	if err := testenv.Shared.Client.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	labels, annotations := map[string]map[string]string{}, map[string]map[string]string{}
	for _, n := range nodes.Items {
		labels[n.Name], annotations[n.Name] = n.Labels, n.Annotations
	}
	tree, _ := treeread.ViewHyperNodes(ownedHyperNodeList(t), labels)
	lost, err := pipeline.LostUplinksFromNodes(annotations, reports.Pointers())
	if err != nil {
		t.Fatal(err)
	}
	lostSwitches, err := pipeline.LostSwitchesFromNodes(annotations)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.AssessHealth(tree, reports.Pointers(), nil, nil, lost, lostSwitches)
}

// uplinkFindings returns the messages of the uplink-lost findings of a, in its order.
func uplinkFindings(a health.Assessment) []string {
	out := []string{}
	for _, f := range a.Findings {
		if f.Kind == health.KindUplinkLost {
			out = append(out, f.Domain+": "+f.Message)
		}
	}
	return out
}

// TestFailedLeafIsLoud fails a leaf of four nodes on the real API server (their reports lose every link, as
// when the leaf switch dies) and checks everything an operator sees: a Warning Event UplinkLost on each Node
// naming the leaf and the time, one NodesLostUplinks on the leader Lease summing them up, recorded once and not
// at every pass; the nodes annotated and labelled down; the finding `fabricmap get health` computes from the
// cluster; the nodes' topology labels held for --unplaced-label-hold and then removed; the leaf's HyperNode
// below the root until its grace period ends, then deleted (through the deletion guard), never a second root.
// A new leader keeps the time the loss was found; a node whose uplink comes back is placed again, and its
// annotation and finding go.
func TestFailedLeafIsLoud(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Shared.Client
	failing := []string{"fl-1", "fl-2", "fl-3", "fl-4"}
	names := append(slices.Clone(failing), "fl-5", "fl-6")
	nodes := map[string]*corev1.Node{}
	for _, n := range names {
		deleteNodeNamed(t, n)
		nodes[n] = createNode(t, n)
	}
	t.Cleanup(func() {
		for _, n := range names {
			deleteNodeNamed(t, n)
		}
	})
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fl-aggregator"}}
	_ = c.Delete(ctx, lease)
	if err := c.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), lease) })
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := &teeRecorder{next: broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")}

	const hold, grace = 5 * time.Minute, 10 * time.Minute
	start := time.Unix(1_800_000_000, 0)
	clock := &fakeClock{t: start}
	newLeader := func() *Reconciler {
		r := newReconciler(t, grace, clock)
		r.Config.UnplacedLabelHold = hold
		key := types.NamespacedName{Namespace: lease.Namespace, Name: lease.Name}
		r.Config.DeletionGuard = &DeletionGuard{MaxShare: 0.2, MinCount: 3, ConfirmAfter: time.Hour, Lease: key}
		r.Events = recorder
		r.Snapshot = &TreeSnapshot{}
		return r
	}
	r := newLeader()
	for _, n := range failing {
		upsertReport(t, report(n, "b1"))
	}
	upsertReport(t, report("fl-5", "b2"))
	upsertReport(t, report("fl-6", "b2"))
	reconcileOnce(t, r)
	tier0 := hypernodegen.DefaultTierKeys[0]
	if got := fabricLabels(t, "fl-1")[tier0]; got != "sw-b1" {
		t.Fatalf("fl-1's %s = %q before the failure, want sw-b1", tier0, got)
	}
	recorder.take()

	// The leaf fails: its nodes' reports stay, naming no switch.
	failedAt := clock.t.Add(time.Minute)
	clock.t = failedAt
	for _, n := range failing {
		upsertReport(t, report(n))
	}
	reconcileOnce(t, r)
	since := failedAt.UTC().Format(time.RFC3339)
	wantFindings := []string{}
	for _, n := range failing {
		wantFindings = append(wantFindings, fmt.Sprintf("sw-b1: node %s lost its leaf sw-b1: no uplink evidence since %s", n, since))
	}
	annotation := fmt.Sprintf(`{"leaf":"sw-b1","since":"%s"}`, since)
	t.Run("Events on each Node and one on the Lease", func(t *testing.T) {
		want := []string{"Lease/fl-aggregator Warning NodesLostUplinks"}
		for _, n := range failing {
			want = append(want, "Node/"+n+" Warning UplinkLost")
		}
		got := recorder.take()
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Events (-want +got):\n%s", diff)
		}
		for _, n := range failing {
			waitForNodeEvent(t, nodes[n], pipeline.ReasonUplinkLost)
		}
		key := types.NamespacedName{Namespace: lease.Namespace, Name: lease.Name}
		waitForLeaseEvent(t, key, pipeline.ReasonNodesLostUplinks, "4 nodes lost all uplink evidence (no report of theirs names a switch that places them): fl-1, fl-2, fl-3, fl-4; leaves: sw-b1 (4)")
	})
	t.Run("the nodes say it: annotation, link-health down, labels held", func(t *testing.T) {
		for _, n := range failing {
			node := nodeObject(t, n)
			if got := node.Annotations[wellknown.UplinkLostAnnotation]; got != annotation {
				t.Errorf("%s's %s = %q, want %q", n, wellknown.UplinkLostAnnotation, got, annotation)
			}
			if got := node.Labels[wellknown.LinkHealthLabel]; got != wellknown.LinkHealthDown {
				t.Errorf("%s's %s = %q, want down", n, wellknown.LinkHealthLabel, got)
			}
			if got := fabricLabels(t, n)[tier0]; got != "sw-b1" {
				t.Errorf("%s's %s = %q within the hold, want sw-b1 kept", n, tier0, got)
			}
		}
		if got := gaugeValue(t, r.Metrics.nodesWithoutUplink); got != 4 {
			t.Errorf("nodes without uplink gauge = %v, want 4", got)
		}
		if got := gaugeValue(t, r.Metrics.labelsHeld); got != 4 {
			t.Errorf("labels held gauge = %v, want 4", got)
		}
	})
	t.Run("get health finds it from the cluster, as the aggregator does", func(t *testing.T) {
		if diff := cmp.Diff(wantFindings, uplinkFindings(clusterHealth(t))); diff != "" {
			t.Errorf("get health's uplink-lost findings (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantFindings, uplinkFindings(r.health.fabricHealth.last)); diff != "" {
			t.Errorf("the aggregator's uplink-lost findings (-want +got):\n%s", diff)
		}
		if got := pageFindings(t, r); !slices.Contains(got, "uplink-lost fl-1") {
			t.Errorf("the page's findings %q lack fl-1's", got)
		}
	})
	t.Run("the leaf's HyperNode waits below the root", func(t *testing.T) {
		checkOneTree(t, "within the grace period")
		want := map[string][]string{"fabric": {"sw-b1", "sw-b2"}, "sw-b1": failing, "sw-b2": {"fl-5", "fl-6"}}
		if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
			t.Errorf("HyperNodes (-want +got):\n%s", diff)
		}
		var leaf topologyv1alpha1.HyperNode
		if err := c.Get(ctx, client.ObjectKey{Name: "sw-b1"}, &leaf); err != nil {
			t.Fatal(err)
		}
		if leaf.Annotations[wellknown.SwitchesAnnotation] == "" || leaf.Labels[wellknown.TierNameLabel] != "leaf" || leaf.Status.NodeCount != 4 {
			t.Errorf("the waiting sw-b1 lost what fabricmap wrote on it: labels %v, annotations %v, node count %d", leaf.Labels, leaf.Annotations, leaf.Status.NodeCount)
		}
	})
	t.Run("a pass with nothing new records no Event", func(t *testing.T) {
		clock.t = clock.t.Add(time.Minute)
		reconcileOnce(t, r)
		if got := recorder.take(); len(got) != 0 {
			t.Errorf("a second pass recorded %q", got)
		}
	})
	var leaderAt time.Time // a new leader counts the grace period of the HyperNodes absent from the tree afresh
	t.Run("a new leader keeps the time the loss was found, and says nothing new on the Lease", func(t *testing.T) {
		r = newLeader()
		leaderAt = clock.t
		reconcileOnce(t, r)
		if diff := cmp.Diff(wantFindings, uplinkFindings(r.health.fabricHealth.last)); diff != "" {
			t.Errorf("the new leader's uplink-lost findings (-want +got):\n%s", diff)
		}
		for _, e := range recorder.take() {
			if strings.HasPrefix(e, "Lease/") {
				t.Errorf("the new leader recorded %q", e)
			}
		}
		if got := nodeObject(t, "fl-1").Annotations[wellknown.UplinkLostAnnotation]; got != annotation {
			t.Errorf("fl-1's annotation after the new leader's pass = %q, want %q", got, annotation)
		}
	})
	t.Run("past the hold the topology labels go; the annotation and the HyperNode stay", func(t *testing.T) {
		clock.t = failedAt.Add(hold + time.Second)
		reconcileOnce(t, r)
		for _, n := range failing {
			if got := fabricLabels(t, n); len(got) != 0 {
				t.Errorf("%s's topology labels past the hold: %v, want none", n, got)
			}
			node := nodeObject(t, n)
			if got := node.Annotations[wellknown.UplinkLostAnnotation]; got != annotation {
				t.Errorf("%s's %s = %q past the hold, want %q", n, wellknown.UplinkLostAnnotation, got, annotation)
			}
			if got := node.Labels[wellknown.LinkHealthLabel]; got != wellknown.LinkHealthDown {
				t.Errorf("%s's %s = %q past the hold, want down", n, wellknown.LinkHealthLabel, got)
			}
		}
		if got := fabricLabels(t, "fl-5")[tier0]; got != "sw-b2" {
			t.Errorf("fl-5's %s = %q, want sw-b2 (it never lost its uplink)", tier0, got)
		}
		got := recorder.take()
		for _, n := range failing {
			if !slices.Contains(got, "Node/"+n+" Warning "+ReasonTopologyLabelsRemoved) {
				t.Errorf("Events %q lack %s on %s", got, ReasonTopologyLabelsRemoved, n)
			}
		}
		if _, ok := hyperNodes(t)["sw-b1"]; !ok {
			t.Error("sw-b1 was deleted before its grace period ended")
		}
		checkOneTree(t, "past the hold")
		if diff := cmp.Diff(wantFindings, uplinkFindings(clusterHealth(t))); diff != "" {
			t.Errorf("get health's uplink-lost findings past the hold (-want +got):\n%s", diff)
		}
	})
	t.Run("past the grace period the leaf's HyperNode is deleted: one root, no orphan", func(t *testing.T) {
		clock.t = leaderAt.Add(grace + time.Second)
		reconcileOnce(t, r)
		checkOneTree(t, "past the grace period")
		want := map[string][]string{"fabric": {"sw-b2"}, "sw-b2": {"fl-5", "fl-6"}}
		if diff := cmp.Diff(want, hyperNodes(t)); diff != "" {
			t.Errorf("HyperNodes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantFindings, uplinkFindings(clusterHealth(t))); diff != "" {
			t.Errorf("get health's uplink-lost findings past the grace period (-want +got):\n%s", diff)
		}
	})
	t.Run("a node whose uplink comes back is placed again; its annotation and finding go", func(t *testing.T) {
		upsertReport(t, report("fl-1", "b1"))
		reconcileOnce(t, r)
		if got := recorder.take(); !slices.Contains(got, "Node/fl-1 Normal "+pipeline.ReasonUplinkRestored) {
			t.Errorf("Events %q lack %s on fl-1", got, pipeline.ReasonUplinkRestored)
		}
		node := nodeObject(t, "fl-1")
		if got, ok := node.Annotations[wellknown.UplinkLostAnnotation]; ok {
			t.Errorf("fl-1 placed again still carries %s=%q", wellknown.UplinkLostAnnotation, got)
		}
		if got := fabricLabels(t, "fl-1")[tier0]; got != "sw-b1" {
			t.Errorf("fl-1's %s = %q once placed again, want sw-b1", tier0, got)
		}
		if diff := cmp.Diff(wantFindings[1:], uplinkFindings(clusterHealth(t))); diff != "" {
			t.Errorf("get health's uplink-lost findings (-want +got):\n%s", diff)
		}
		if got := gaugeValue(t, r.Metrics.nodesWithoutUplink); got != 3 {
			t.Errorf("nodes without uplink gauge = %v, want 3", got)
		}
		checkOneTree(t, "with fl-1 back")
	})
}
