package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/ib/ibtest"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/wellknown"
)

// withoutSwitch is capture with the switch of guid (16 hex digits, as ibtest writes them) gone, as
// ibnetdiscover sees a fabric whose switch died or left: its record, the cables of other switches to it and the
// HCAs behind it (unreachable) are not in it.
func withoutSwitch(capture []byte, guid string) []byte {
	ref := []byte(`"S-` + guid + `"`)
	own := []byte("switchguid=0x" + strings.TrimLeft(guid, "0") + "(")
	var out [][]byte
	for _, rec := range bytes.Split(capture, []byte("\n\n")) {
		if bytes.Contains(rec, own) || (bytes.Contains(rec, []byte("\ncaguid=")) && bytes.Contains(rec, ref)) {
			continue
		}
		lines := bytes.Split(rec, []byte("\n"))
		lines = slices.DeleteFunc(lines, func(l []byte) bool { return bytes.Contains(l, ref) })
		out = append(out, bytes.Join(lines, []byte("\n")))
	}
	return bytes.Join(out, []byte("\n\n"))
}

// switchLostFindings returns the switch-lost findings of a as "<node> <switches>", in its order.
func switchLostFindings(a health.Assessment) []string {
	out := []string{}
	for _, f := range a.Findings {
		if f.Kind == health.KindSwitchLost {
			out = append(out, f.Node+" "+strings.Join(f.Switches, ","))
		}
	}
	return out
}

// TestVanishedRailLeafIsLoud removes one rail leaf from the capture of a rail-optimised unit (16 hosts on 8
// rails) on the real API server: every host stays placed and lost a rail, and it is said where an operator
// looks: a switch-lost finding per host naming the leaf (the aggregator's and `fabricmap get health`'s, from the
// Nodes' annotations), a Warning Event SwitchLost on each Node and one SwitchesVanished on the leader Lease
// (once, not at every pass), the fabricmap.io/switch-lost annotation, the link-health label degraded, the gauge.
// A new leader keeps the time; the leaf coming back clears everything with a SwitchRestored Event per Node; an
// admin who removes a node's annotation acknowledges its loss.
func TestVanishedRailLeafIsLoud(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Shared.Client
	fab := ibtest.FatTree{Hosts: 16, HostsPerSU: 16, Rails: 8, Spines: 2, Ports: 64}
	var full bytes.Buffer
	if _, err := fab.WriteTo(&full); err != nil {
		t.Fatal(err)
	}
	short := withoutSwitch(full.Bytes(), fab.LeafGUID(1, 3))
	file := filepath.Join(t.TempDir(), "fabric.txt")
	writeCapture := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCapture(full.Bytes())

	hosts := make([]string, 0, fab.Hosts)
	nodes := map[string]*corev1.Node{}
	for h := 1; h <= fab.Hosts; h++ {
		n := fab.HostName(h)
		hosts = append(hosts, n)
		deleteNodeNamed(t, n)
		nodes[n] = createNode(t, n)
	}
	t.Cleanup(func() {
		for _, n := range hosts {
			deleteNodeNamed(t, n)
		}
	})
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ls-aggregator"}}
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
	key := types.NamespacedName{Namespace: lease.Namespace, Name: lease.Name}

	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	newLeader := func() *Reconciler {
		r := newReconciler(t, 10*time.Minute, clock)
		r.Config.DeletionGuard = &DeletionGuard{Lease: key}
		r.Sources = []sources.Spec{{Source: ibfabric.NewCapture(file)}}
		r.Events = recorder
		return r
	}
	r := newLeader()
	// poll lets the next look at the capture begin and takes its outcome in, as in TestPartialCaptureIsHeldBack.
	poll := func() {
		t.Helper()
		clock.t = clock.t.Add(time.Minute)
		reconcileOnce(t, r)
		settleSources(t, r)
		clock.t = clock.t.Add(time.Second)
		reconcileOnce(t, r)
	}
	reconcileOnce(t, r)
	unitSwitches := func() []string {
		t.Helper()
		for _, hn := range ownedHyperNodeList(t) {
			if len(memberNames([]topologyv1alpha1.HyperNode{hn})[hn.Name]) == fab.Hosts {
				return strings.Split(hn.Annotations[wellknown.SwitchesAnnotation], ",")
			}
		}
		t.Fatalf("no HyperNode holds the %d hosts: %v", fab.Hosts, hyperNodes(t))
		return nil
	}
	before := unitSwitches()
	if len(before) != fab.Rails {
		t.Fatalf("the unit's HyperNode stands for %v, want %d rail leaves", before, fab.Rails)
	}
	if got := switchLostFindings(r.health.fabricHealth.last); len(got) != 0 {
		t.Fatalf("switch-lost findings on the whole capture: %q", got)
	}
	recorder.take()

	writeCapture(short)
	poll()
	lostAt := clock.t.UTC().Format(time.RFC3339)
	after := unitSwitches()
	gone := slices.DeleteFunc(slices.Clone(before), func(s string) bool { return slices.Contains(after, s) })
	if len(gone) != 1 || len(after) != fab.Rails-1 {
		t.Fatalf("the unit's switches went from %v to %v, want one rail leaf fewer", before, after)
	}
	wantFindings := make([]string, 0, len(hosts))
	for _, n := range hosts {
		wantFindings = append(wantFindings, n+" "+gone[0])
	}
	annotation := fmt.Sprintf(`{"switches":[{"id":%q,"name":"ib-su1-leaf-r3"}],"since":%q}`, gone[0], lostAt)

	t.Run("every host's finding, from the aggregator and from the cluster", func(t *testing.T) {
		if diff := cmp.Diff(wantFindings, switchLostFindings(r.health.fabricHealth.last)); diff != "" {
			t.Errorf("the aggregator's switch-lost findings (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantFindings, switchLostFindings(clusterHealth(t))); diff != "" {
			t.Errorf("get health's switch-lost findings (-want +got):\n%s", diff)
		}
		for _, f := range r.health.fabricHealth.last.Findings {
			if f.Kind == health.KindSwitchLost && (!strings.Contains(f.Message, "ib-su1-leaf-r3") || f.Severity != health.SeverityCritical) {
				t.Errorf("finding %+v: want critical, naming ib-su1-leaf-r3", f)
			}
		}
		if got := findingsGauge(t, r)[health.KindSwitchLost]; got != float64(fab.Hosts) {
			t.Errorf("link findings gauge for switch-lost = %v, want %d", got, fab.Hosts)
		}
		if got := gaugeValue(t, r.Metrics.nodesWithLostSwitches); got != float64(fab.Hosts) {
			t.Errorf("nodes with lost switches gauge = %v, want %d", got, fab.Hosts)
		}
	})
	t.Run("Events on each Node and one on the Lease", func(t *testing.T) {
		want := []string{"Lease/ls-aggregator Warning " + pipeline.ReasonSwitchesVanished}
		for _, n := range hosts {
			want = append(want, "Node/"+n+" Warning "+pipeline.ReasonSwitchLost)
		}
		got := recorder.take()
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Events (-want +got):\n%s", diff)
		}
		for _, n := range hosts {
			waitForNodeEvent(t, nodes[n], pipeline.ReasonSwitchLost)
		}
		waitForLeaseEvent(t, key, pipeline.ReasonSwitchesVanished, "switch ib-su1-leaf-r3 ("+gone[0]+") gone from the tree; 16 nodes that had it stay placed and lost it")
	})
	t.Run("the Nodes say it: annotation, link-health degraded", func(t *testing.T) {
		for _, n := range hosts {
			node := nodeObject(t, n)
			if got := node.Annotations[wellknown.SwitchLostAnnotation]; got != annotation {
				t.Errorf("%s's %s = %q, want %q", n, wellknown.SwitchLostAnnotation, got, annotation)
			}
			if got := node.Labels[wellknown.LinkHealthLabel]; got != wellknown.LinkHealthDegraded {
				t.Errorf("%s's %s = %q, want degraded", n, wellknown.LinkHealthLabel, got)
			}
		}
	})
	t.Run("a pass with nothing new records no Event", func(t *testing.T) {
		poll()
		if got := recorder.take(); len(got) != 0 {
			t.Errorf("a steady pass recorded %q", got)
		}
		if got := gaugeValue(t, r.Metrics.nodesWithLostSwitches); got != float64(fab.Hosts) {
			t.Errorf("nodes with lost switches gauge = %v, want %d", got, fab.Hosts)
		}
	})
	t.Run("a new leader keeps the losses and their time, and says nothing new on the Lease", func(t *testing.T) {
		r = newLeader()
		poll()
		if diff := cmp.Diff(wantFindings, switchLostFindings(r.health.fabricHealth.last)); diff != "" {
			t.Errorf("the new leader's switch-lost findings (-want +got):\n%s", diff)
		}
		for _, e := range recorder.take() {
			if strings.HasPrefix(e, "Lease/") {
				t.Errorf("the new leader recorded %q", e)
			}
		}
		if got := nodeObject(t, hosts[0]).Annotations[wellknown.SwitchLostAnnotation]; got != annotation {
			t.Errorf("%s's annotation after the new leader's pass = %q, want %q", hosts[0], got, annotation)
		}
	})
	t.Run("the leaf back: findings, annotations and label go, each Node told", func(t *testing.T) {
		writeCapture(full.Bytes())
		poll()
		if got := switchLostFindings(r.health.fabricHealth.last); len(got) != 0 {
			t.Errorf("switch-lost findings once the leaf is back: %q", got)
		}
		if got := switchLostFindings(clusterHealth(t)); len(got) != 0 {
			t.Errorf("get health's switch-lost findings once the leaf is back: %q", got)
		}
		got := recorder.take()
		for _, n := range hosts {
			if !slices.Contains(got, "Node/"+n+" Normal "+pipeline.ReasonSwitchRestored) {
				t.Errorf("Events %q lack %s on %s", got, pipeline.ReasonSwitchRestored, n)
			}
			node := nodeObject(t, n)
			if v, ok := node.Annotations[wellknown.SwitchLostAnnotation]; ok {
				t.Errorf("%s still carries %s=%q", n, wellknown.SwitchLostAnnotation, v)
			}
			if v, ok := node.Labels[wellknown.LinkHealthLabel]; ok {
				t.Errorf("%s still carries %s=%q", n, wellknown.LinkHealthLabel, v)
			}
		}
		if got := gaugeValue(t, r.Metrics.nodesWithLostSwitches); got != 0 {
			t.Errorf("nodes with lost switches gauge = %v, want 0", got)
		}
	})
	t.Run("an admin acknowledges a leaf removed on purpose by removing the annotation", func(t *testing.T) {
		writeCapture(short)
		poll()
		if got := len(switchLostFindings(r.health.fabricHealth.last)); got != fab.Hosts {
			t.Fatalf("%d switch-lost findings once the leaf is gone again, want %d", got, fab.Hosts)
		}
		poll() // a pass that sees the annotation written: only then is its removal the admin's
		recorder.take()
		acked := nodeObject(t, hosts[0])
		patch := []byte(`{"metadata":{"annotations":{"` + wellknown.SwitchLostAnnotation + `":null}}}`)
		if err := c.Patch(ctx, acked, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		poll()
		if diff := cmp.Diff(wantFindings[1:], switchLostFindings(r.health.fabricHealth.last)); diff != "" {
			t.Errorf("switch-lost findings after the acknowledgement (-want +got):\n%s", diff)
		}
		if got := recorder.take(); !slices.Contains(got, "Node/"+hosts[0]+" Normal "+pipeline.ReasonSwitchLossAcknowledged) {
			t.Errorf("Events %q lack %s on %s", got, pipeline.ReasonSwitchLossAcknowledged, hosts[0])
		}
		if v, ok := nodeObject(t, hosts[0]).Annotations[wellknown.SwitchLostAnnotation]; ok {
			t.Errorf("the acknowledged %s carries %s=%q again", hosts[0], wellknown.SwitchLostAnnotation, v)
		}
		if got := gaugeValue(t, r.Metrics.nodesWithLostSwitches); got != float64(fab.Hosts-1) {
			t.Errorf("nodes with lost switches gauge = %v, want %d", got, fab.Hosts-1)
		}
	})
}
