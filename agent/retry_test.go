package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// flakyClient is the real report client, with the first writes answered as an overloaded or racing API
// server would answer them.
type flakyClient struct {
	ReportClient
	mu       sync.Mutex
	failures []error
	attempts []time.Time
}

func (c *flakyClient) ApplyReport(ctx context.Context, r *v1alpha1.NodeFabricReport, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	c.mu.Lock()
	c.attempts = append(c.attempts, time.Now())
	var err error
	if len(c.failures) > 0 {
		err, c.failures = c.failures[0], c.failures[1:]
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.ReportClient.ApplyReport(ctx, r, fieldManager)
}

func (c *flakyClient) attemptTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.attempts...)
}

// An API server that answers 503 and then 409 does not stop the agent: it retries with a growing wait (1 s,
// then 2 s, not its 50 ms interval), and its report lands once the server answers.
func TestAgentRetriesWithBackoff(t *testing.T) {
	testenv.Require(t)
	gr := schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "nodefabricreports"}
	flaky := &flakyClient{ReportClient: reportClient(t), failures: []error{
		apierrors.NewServiceUnavailable("etcd leader changed"),
		apierrors.NewConflict(gr, "flaky-node", nil),
	}}
	now := time.Unix(1_800_000_000, 0)
	a := newAgent(t, "flaky-node", &now, &scriptedProbe{name: "lldp", res: discovery.Result{Neighbors: []v1alpha1.LinkNeighbor{neighbor("02:00:00:00:00:0a")}}})
	a.Publisher.Client = flaky
	a.Config.Interval, a.Config.MaxBackoff = 50*time.Millisecond, time.Minute

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for count(a.Metrics.writes) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the agent stopped on a failing API server: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the report was never written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := getReport(t, "flaky-node"); len(got.Spec.Neighbors) != 1 {
		t.Errorf("report = %+v", got.Spec)
	}
	if n := count(a.Metrics.writeErrors); n != 2 {
		t.Errorf("write errors = %v, want 2", n)
	}
	at := flaky.attemptTimes()
	if len(at) < 3 {
		t.Fatalf("%d attempts, want at least 3", len(at))
	}
	if first, second := at[1].Sub(at[0]), at[2].Sub(at[1]); first < 900*time.Millisecond || second < 1900*time.Millisecond {
		t.Errorf("waits between attempts %v and %v, want about 1 s and 2 s (backoff, not the 50 ms interval)", first, second)
	}
}
