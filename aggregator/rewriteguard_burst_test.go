package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
)

// TestRewriteBurstHeldAcrossPasses is the field's attack on the real API server, with the aggregator's real
// manager and watches: 32 nodes behind two leaves, then the 16 reports of one leaf moved to the other in one go,
// which the watches deliver over several passes. The rewrite guard judges the change whole: it is held (the
// gauge counts all 16, a RewritesHeld Event on the leader Lease), the nodes past the share keep their leaf
// label and the emptied leaf stays. An admin's confirmation on the Lease then starts a pass at once: the whole
// move is written within seconds, with nothing else changing (the held pass would look again only after 30 s).
func TestRewriteBurstHeldAcrossPasses(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	var nodes []string
	for i := range 32 {
		n := fmt.Sprintf("burst-n%02d", i)
		nodes = append(nodes, n)
		createNode(t, n)
		upsertReport(t, report(n, []string{"e0", "e1"}[i/16]))
	}
	lease := types.NamespacedName{Namespace: "default", Name: "fabricmap-burst-test"}
	reg := prometheus.NewRegistry()
	logs := startGuardedAggregator(t, lease, reg)

	leafKey := hypernodegen.DefaultLabelKeys().Tiers[0]
	leaves := func() map[string]string { // node → its leaf label
		out := map[string]string{}
		for _, n := range nodes {
			var node corev1.Node
			if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: n}, &node); err != nil {
				t.Fatal(err)
			}
			out[n] = node.Labels[leafKey]
		}
		return out
	}
	var from, to string
	testenv.Eventually(t, time.Minute, "every node labelled with its leaf", func() (bool, string) {
		l := leaves()
		from, to = l[nodes[0]], l[nodes[16]]
		for i, n := range nodes {
			if l[n] == "" || l[n] != []string{from, to}[i/16] {
				return false, fmt.Sprintf("leaf labels: %v", l)
			}
		}
		return from != to, fmt.Sprintf("one leaf label for both leaves: %v", l)
	})
	leafHyperNode := hyperNodeHolding(t, nodes[0])

	passes := func() float64 { return gathered(t, reg, "fabricmap_aggregator_reconcile_duration_seconds") }
	before := passes()
	for _, n := range nodes[:16] { // one kubectl apply of 16 reports: one request after the other
		upsertReport(t, report(n, "e1"))
	}
	testenv.Eventually(t, 30*time.Second, "the whole move held", func() (bool, string) {
		got := gathered(t, reg, "fabricmap_aggregator_rewrites_held")
		return got == 16, fmt.Sprintf("rewrites held = %v, want 16 (every moved node); log:\n%s", got, logs)
	})
	t.Logf("the aggregator took the 16 reports in %v passes", passes()-before)
	// The Event is the hold's first: Events of one reason on one object within minutes are one series, which
	// keeps the first note; the gauge and the log say the whole.
	waitForLeaseEvent(t, lease, ReasonRewritesHeld, "of 32 labelled nodes their topology labels")
	moved := 0
	for _, n := range nodes[:16] {
		if leaves()[n] == to {
			moved++
		}
	}
	if moved > 6 { // 20 % of 32: what passes within the share may have written before the change showed its size
		t.Errorf("%d of the 16 moved nodes relabelled while the move is held, want at most 6 (the share)", moved)
	}
	if got := hyperNodeHolding(t, nodes[15]); got != leafHyperNode {
		t.Errorf("HyperNode of %s is %q while the move is held, want %q", nodes[15], got, leafHyperNode)
	}

	confirmDeletions(t, lease, time.Now())
	confirmed := time.Now()
	testenv.Eventually(t, 10*time.Second, "the confirmed move written", func() (bool, string) {
		l := leaves()
		for _, n := range nodes {
			if l[n] != to {
				return false, fmt.Sprintf("%s is on %q, want %q; leaf labels: %v", n, l[n], to, l)
			}
		}
		return true, ""
	})
	t.Logf("the confirmed move was written %v after the confirmation", time.Since(confirmed).Round(time.Millisecond))
	if got := gathered(t, reg, "fabricmap_aggregator_rewrite_confirmations_total", "by", "annotation"); got != 1 {
		t.Errorf("rewrite confirmations by annotation = %v, want 1", got)
	}
	waitForLeaseEvent(t, lease, ReasonRewritesConfirmed, "confirmed by annotation")
}

// startGuardedAggregator runs the aggregator's manager, with leader election on lease, node labels and the
// guards (20 %, 3, an hour) confirmed on that Lease, until the test ends; its metrics go to reg. It returns
// its log.
func startGuardedAggregator(t *testing.T, lease types.NamespacedName, reg *prometheus.Registry) *syncBuffer {
	t.Helper()
	guard := DeletionGuard{MaxShare: 0.2, MinCount: 3, ConfirmAfter: time.Hour, Lease: lease}
	conf := Config{Inference: pipeline.Inference{RootName: "fabric"}, NodeLabels: true, LabelKeys: hypernodegen.DefaultLabelKeys(),
		DeleteGracePeriod: time.Minute, DeletionGuard: &guard}
	mc := ManagerConfig{LeaderElection: true, LeaderElectionNamespace: lease.Namespace, LeaderElectionID: lease.Name,
		MetricsAddr: "0", HealthAddr: "0", Registry: reg}
	logs := &syncBuffer{}
	mgr, err := NewManager(testenv.Shared.Config, mc, conf, nil, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatalf("creating the aggregator: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("aggregator: %v", err)
		}
		_ = testenv.Shared.Client.Delete(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: lease.Namespace, Name: lease.Name}})
		if t.Failed() {
			t.Logf("aggregator log:\n%s", logs)
		}
	})
	return logs
}

// hyperNodeHolding is the name of the HyperNode that lists node as a member; "" when none does.
func hyperNodeHolding(t *testing.T, node string) string {
	t.Helper()
	for hn, members := range hyperNodes(t) {
		for _, m := range members {
			if m == node {
				return hn
			}
		}
	}
	return ""
}

// gathered is the value of the metric name in reg whose labels include the given name-value pairs: a
// counter's or gauge's value, a histogram's count of observations; 0 when there is none.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labelPairs ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labelPairs) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// syncBuffer is a log sink the aggregator writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
