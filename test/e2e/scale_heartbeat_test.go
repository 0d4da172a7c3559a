package e2e

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/wellknown"
)

// heartbeatWorkers bounds the heartbeats in flight. Real agents each send their own, so nothing bounds them
// there; at 417/s (50,016 nodes, 2 min) 256 in flight fall behind only when a renewal takes over 0.6 s, and
// then the achieved rate shows it.
const heartbeatWorkers = 256

// heartbeats renews the agents' heartbeat Leases as the agents do, through the agent's own HeartbeatClient (a
// server-side apply of the Lease, owned by the Node, valid three intervals), each node once per interval and
// the nodes spread evenly over it: N/interval renewals per second.
type heartbeats struct {
	client    agent.HeartbeatClient
	namespace string
	interval  time.Duration
	nodes     []string
	uids      []types.UID

	sent, failed atomic.Int64
	lastErr      atomic.Value // error
	stop         context.CancelFunc
	done         sync.WaitGroup
}

// beat renews node i's Lease once, as its agent does.
func (h *heartbeats) beat(ctx context.Context, i int) error {
	owner := &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: h.nodes[i], UID: h.uids[i]}
	return h.client.ApplyHeartbeat(ctx, h.namespace, h.nodes[i], time.Now(), 3*h.interval, owner, wellknown.AgentFieldManager)
}

// targetPerSecond is the rate the agents of the load renew at.
func (h *heartbeats) targetPerSecond() float64 { return float64(len(h.nodes)) / h.interval.Seconds() }

// start renews the Leases until stopped: a pacer hands out renewals as they fall due (node i at i·interval/N
// past each interval's start) to heartbeatWorkers workers. When the workers fall behind, renewals wait and the
// achieved rate (count over time) drops below the target.
func (h *heartbeats) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	due := make(chan int, heartbeatWorkers)
	for range heartbeatWorkers {
		h.done.Go(func() {
			for i := range due {
				if err := h.beat(ctx, i); err != nil {
					if ctx.Err() != nil {
						return
					}
					h.failed.Add(1)
					h.lastErr.Store(err)
					continue
				}
				h.sent.Add(1)
			}
		})
	}
	h.done.Go(func() {
		defer close(due)
		t0 := time.Now()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		n := int64(0) // renewals handed out
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				for wanted := int64(now.Sub(t0).Seconds() * h.targetPerSecond()); n < wanted; n++ {
					select {
					case due <- int(n % int64(len(h.nodes))):
					case <-ctx.Done():
						return
					}
				}
			}
		}
	})
}

// halt stops the renewals and waits for those in flight.
func (h *heartbeats) halt() {
	if h.stop != nil {
		h.stop()
		h.done.Wait()
	}
}

// err is the last renewal's error, if any failed.
func (h *heartbeats) err() error {
	err, _ := h.lastErr.Load().(error)
	return err
}

// heartbeatRate is how many renewals per second the agents sent between two counts taken d apart.
func heartbeatRate(before, after int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(after-before) / d.Seconds()
}
