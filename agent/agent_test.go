package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// scriptedProbe returns whatever the test sets next.
type scriptedProbe struct {
	name string
	res  discovery.Result
	err  error
}

func (p *scriptedProbe) Name() string                                  { return p.name }
func (p *scriptedProbe) Run(context.Context) (discovery.Result, error) { return p.res, p.err }

func neighbor(chassis string) v1alpha1.LinkNeighbor {
	return v1alpha1.LinkNeighbor{Source: v1alpha1.SourceLLDP, Interface: "eth0", ChassisID: chassis, ChassisIDSubtype: "mac",
		PortID: "Ethernet1/1", PortIDSubtype: "ifName", SystemName: "leaf"}
}

func newAgent(t *testing.T, node string, clock *time.Time, probes ...discovery.Probe) *Agent {
	t.Helper()
	return &Agent{
		Config:    Config{Interval: time.Minute, DataExpiry: 10 * time.Minute},
		Probes:    probes,
		Publisher: &Publisher{Client: reportClient(t), NodeName: node},
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics:   NewMetrics(prometheus.NewRegistry()),
		Now:       func() time.Time { return *clock },
	}
}

func getReport(t *testing.T, node string) *v1alpha1.NodeFabricReport {
	t.Helper()
	var r v1alpha1.NodeFabricReport
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: node}, &r); err != nil {
		t.Fatalf("reading report %s: %v", node, err)
	}
	return &r
}

func count(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

func cycle(t *testing.T, a *Agent) bool {
	t.Helper()
	wrote, err := a.Cycle(context.Background())
	if err != nil {
		t.Fatalf("cycle: %v", err)
	}
	return wrote
}

func TestAgentPublishesOnlyOnChange(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "agent-node-1"}}
	if err := testenv.Shared.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	lldp := &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:01")}}}
	nvml := &scriptedProbe{name: "nvml", res: discovery.Result{NotApplicable: "no NVIDIA driver"}}
	a := newAgent(t, node.Name, &now, lldp, nvml)

	if !cycle(t, a) {
		t.Fatal("first cycle wrote nothing")
	}
	r := getReport(t, node.Name)
	if len(r.Spec.Neighbors) != 1 || r.Spec.Neighbors[0].ChassisID != "02:00:00:00:00:01" || r.Status.NeighborCount != 1 {
		t.Fatalf("report = %+v", r)
	}
	if len(r.OwnerReferences) != 1 || r.OwnerReferences[0].UID != node.UID || r.OwnerReferences[0].Kind != "Node" {
		t.Errorf("owner references = %+v, want the Node", r.OwnerReferences)
	}
	if got := conditions(r); got["lldp"] != v1alpha1.ProbeAvailable || got["nvml"] != v1alpha1.ProbeNotApplicable {
		t.Errorf("conditions = %v", got)
	}
	rv := r.ResourceVersion

	now = now.Add(time.Minute)
	if cycle(t, a) {
		t.Fatal("an unchanged cycle wrote")
	}
	if got := getReport(t, node.Name).ResourceVersion; got != rv {
		t.Fatalf("resourceVersion moved from %s to %s with nothing changed", rv, got)
	}
	if count(a.Metrics.skippedWrites) != 1 || count(a.Metrics.writes) != 1 {
		t.Errorf("writes %v, skipped %v", count(a.Metrics.writes), count(a.Metrics.skippedWrites))
	}

	t.Run("a restarted agent writes nothing when nothing changed", func(t *testing.T) {
		fresh := newAgent(t, node.Name, &now, lldp, nvml)
		if cycle(t, fresh) {
			t.Fatal("a restarted agent rewrote an unchanged report")
		}
	})

	t.Run("a change gives exactly one write", func(t *testing.T) {
		lldp.res.Neighbors = append(lldp.res.Neighbors, neighbor("02:00:00:00:00:02"))
		if !cycle(t, a) {
			t.Fatal("a change was not written")
		}
		if cycle(t, a) {
			t.Fatal("the same change was written twice")
		}
		if n := len(getReport(t, node.Name).Spec.Neighbors); n != 2 {
			t.Fatalf("neighbours = %d, want 2", n)
		}
	})

	t.Run("a failing probe keeps its last good data, marked Degraded, until expiry", func(t *testing.T) {
		seen := now.Truncate(time.Second)
		lldp.err = errors.New("socket: operation not permitted")
		now = now.Add(5 * time.Minute)
		if !cycle(t, a) {
			t.Fatal("the failure was not written")
		}
		r := getReport(t, node.Name)
		if len(r.Spec.Neighbors) != 2 {
			t.Fatalf("last good neighbours were dropped: %+v", r.Spec.Neighbors)
		}
		c := probeCondition(r, "lldp")
		if c.State != v1alpha1.ProbeDegraded || c.Reason != ReasonFailed || c.LastSuccessTime == nil || !c.LastSuccessTime.Time.Equal(seen) {
			t.Fatalf("lldp condition = %+v, want Degraded with last success %v", c, seen)
		}
		now = now.Add(6 * time.Minute) // past the 10 minute expiry
		if !cycle(t, a) {
			t.Fatal("expiry was not written")
		}
		r = getReport(t, node.Name)
		if len(r.Spec.Neighbors) != 0 || probeCondition(r, "lldp").Reason != ReasonFailedExpired {
			t.Fatalf("expired data kept: %+v / %+v", r.Spec.Neighbors, probeCondition(r, "lldp"))
		}
		lldp.err = nil
	})
}

func TestAgentRefusesAnotherNodesReport(t *testing.T) {
	testenv.Require(t)
	p := &Publisher{Client: reportClient(t), NodeName: "node-a"}
	r := buildReport("node-b", nil, nil, nil, time.Now())
	if _, err := p.Publish(context.Background(), r); err == nil {
		t.Fatal("the publisher wrote another node's report")
	}
	var got v1alpha1.NodeFabricReport
	if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: "node-b"}, &got); !apierrors.IsNotFound(err) {
		t.Fatalf("report node-b exists or cannot be read: %v", err)
	}
}

func TestAgentWithoutNodeObjectStillReports(t *testing.T) {
	testenv.Require(t)
	now := time.Unix(1_800_000_000, 0)
	a := newAgent(t, "no-node-object", &now, &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:09")}}})
	if !cycle(t, a) {
		t.Fatal("nothing written")
	}
	if refs := getReport(t, "no-node-object").OwnerReferences; len(refs) != 0 {
		t.Fatalf("owner reference to a Node that does not exist: %+v", refs)
	}
}

func conditions(r *v1alpha1.NodeFabricReport) map[string]v1alpha1.ProbeState {
	out := map[string]v1alpha1.ProbeState{}
	for _, c := range r.Status.Probes {
		out[c.Name] = c.State
	}
	return out
}

func probeCondition(r *v1alpha1.NodeFabricReport, name string) v1alpha1.ProbeCondition {
	for _, c := range r.Status.Probes {
		if c.Name == name {
			return c
		}
	}
	return v1alpha1.ProbeCondition{}
}

// reportClient is the agent's own REST client, with the test administrator's credentials.
func reportClient(t testing.TB) ReportClient {
	t.Helper()
	c, err := NewReportClient(testenv.Shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
