package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// A report that someone else deletes or changes is restored by the agent's next cycle, though nothing changed
// on the node, whoever holds the changed fields; a report left alone is never written again.
func TestAgentRestoresItsReport(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	for i, tc := range []struct {
		name   string
		tamper func(t *testing.T, r *v1alpha1.NodeFabricReport) error
		reason string
	}{
		{name: "deleted", reason: "missing",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error { return c.Delete(ctx, r) }},
		{name: "a neighbour's chassis edited", reason: "modified",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error {
				r.Spec.Neighbors[0].ChassisID = "02:00:00:00:00:ff"
				return c.Update(ctx, r)
			}},
		{name: "an NVLink domain the node does not have added", reason: "modified",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error {
				r.Spec.NVLinkDomain = "forged.1"
				return c.Update(ctx, r)
			}},
		{name: "a probe condition added to the status", reason: "modified",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error {
				r.Status.Probes = append(r.Status.Probes, v1alpha1.ProbeCondition{Name: "forged", State: v1alpha1.ProbeAvailable,
					LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0))})
				return c.Status().Update(ctx, r)
			}},
		{name: "a probe's state edited", reason: "modified",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error {
				r.Status.Probes[0].State, r.Status.Probes[0].Reason = v1alpha1.ProbeDegraded, "EditedByHand"
				return c.Status().Update(ctx, r)
			}},
		{name: "its owner reference and content hash removed", reason: "modified",
			tamper: func(t *testing.T, r *v1alpha1.NodeFabricReport) error {
				r.OwnerReferences, r.Annotations = nil, nil
				return c.Update(ctx, r)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("restore-node-%d", i)}}
			if err := c.Create(ctx, node); err != nil {
				t.Fatal(err)
			}
			now := time.Unix(1_800_000_000, 0)
			a := newAgent(t, node.Name, &now,
				&scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:01")}}},
				&scriptedProbe{name: "nvml", res: discovery.Result{NotApplicable: "no NVIDIA driver"}})
			if !cycle(t, a) {
				t.Fatal("the first cycle wrote nothing")
			}
			want := getReport(t, node.Name)
			unchangedCycles(t, a, 1)

			if err := tc.tamper(t, getReport(t, node.Name)); err != nil {
				t.Fatalf("tampering: %v", err)
			}
			now = now.Add(time.Minute)
			if !cycle(t, a) {
				t.Fatal("the cycle after the tampering wrote nothing")
			}
			got := getReport(t, node.Name)
			if diff := cmp.Diff(contentOf(want), contentOf(got)); diff != "" {
				t.Errorf("report not restored (-as the agent wrote it +after its next cycle):\n%s", diff)
			}
			if n := count(a.Metrics.restores.WithLabelValues(tc.reason)); n != 1 {
				t.Errorf("restores{reason=%q} = %v, want 1", tc.reason, n)
			}
			unchangedCycles(t, a, 3)
		})
	}
}

// unchangedCycles runs n cycles in which nothing changes and checks that none wrote: by the agent's metrics
// and by the report's resourceVersion.
func unchangedCycles(t *testing.T, a *Agent, n int) {
	t.Helper()
	writes, skipped := count(a.Metrics.writes), count(a.Metrics.skippedWrites)
	rv := getReport(t, a.Publisher.NodeName).ResourceVersion
	for range n {
		if cycle(t, a) {
			t.Fatal("a cycle with nothing changed wrote")
		}
	}
	if got := count(a.Metrics.writes); got != writes {
		t.Errorf("%d unchanged cycles: fabricmap_agent_report_writes_total went from %v to %v", n, writes, got)
	}
	if got := count(a.Metrics.skippedWrites); got != skipped+float64(n) {
		t.Errorf("%d unchanged cycles: fabricmap_agent_report_skipped_writes_total went from %v to %v", n, skipped, got)
	}
	if got := getReport(t, a.Publisher.NodeName).ResourceVersion; got != rv {
		t.Errorf("%d unchanged cycles: resourceVersion moved from %s to %s", n, rv, got)
	}
}

// content is what the agent writes of a report.
type content struct {
	Spec        v1alpha1.NodeFabricReportSpec
	Status      v1alpha1.NodeFabricReportStatus
	Annotations map[string]string
	Owners      []metav1.OwnerReference
}

func contentOf(r *v1alpha1.NodeFabricReport) content {
	return content{Spec: r.Spec, Status: r.Status, Annotations: r.Annotations, Owners: r.OwnerReferences}
}

// unreadableClient is the real report client, with reads answered as an overloaded API server would.
type unreadableClient struct{ ReportClient }

func (unreadableClient) GetReport(context.Context, string) (*v1alpha1.NodeFabricReport, error) {
	return nil, apierrors.NewServiceUnavailable("etcd leader changed")
}

// A cycle whose read-back fails writes nothing (it cannot tell what is stored), fails so that Run retries it
// with backoff, and still runs the probes, whose data and metrics stay fresh.
func TestAgentCycleWithAnUnreadableReport(t *testing.T) {
	testenv.Require(t)
	now := time.Unix(1_800_000_000, 0)
	a := newAgent(t, "unreadable-node", &now,
		&scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:0b")}}})
	a.Publisher.Client = unreadableClient{reportClient(t)}
	wrote, err := a.Cycle(context.Background())
	if err == nil || wrote || !strings.Contains(err.Error(), "reading the node's report back") {
		t.Fatalf("Cycle = %v, %v; want no write and the failed read", wrote, err)
	}
	var m dto.Metric
	if err := a.Metrics.probeLastSuccess.WithLabelValues("lldp").Write(&m); err != nil || m.GetGauge().GetValue() != float64(now.Unix()) {
		t.Errorf("lldp last success = %v (%v), want %d: the probe did not run", m.GetGauge().GetValue(), err, now.Unix())
	}
	got := map[string]float64{"writes": count(a.Metrics.writes), "writeErrors": count(a.Metrics.writeErrors)}
	if diff := cmp.Diff(map[string]float64{"writes": 0, "writeErrors": 1}, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: "unreadable-node"}, &v1alpha1.NodeFabricReport{}); !apierrors.IsNotFound(err) {
		t.Errorf("report written or unreadable: %v", err)
	}
}
