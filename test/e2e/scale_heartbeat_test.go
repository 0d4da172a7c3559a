package e2e

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/agent"
)

// heartbeatWorkers bounds the heartbeats in flight. Real agents each send their own, so nothing bounds them
// there; at 417/s (50,016 nodes, 2 min) 256 in flight fall behind only when a renewal takes over 0.6 s, and
// then the achieved rate shows it.
const heartbeatWorkers = 256

// heartbeats renews the agents' heartbeat Leases as the agents do, through the agent's own code
// (agent.Heartbeat.Beat on its HeartbeatClient: the first renewal applies the whole Lease, owned by the Node,
// valid three intervals; later ones patch its renew time), each node once per interval and the nodes spread
// evenly over it: N/interval renewals per second.
type heartbeats struct {
	namespace string
	interval  time.Duration
	nodes     []string
	uids      []types.UID
	// beats are the agents' heartbeats, one per node; busy marks those renewing now.
	beats []agent.Heartbeat
	busy  []atomic.Bool

	// sent and failed count the renewals made and refused; late those not sent when due (see start).
	sent, failed, late atomic.Int64
	lastErr            atomic.Value // error
	stop               context.CancelFunc
	done               sync.WaitGroup
}

// newHeartbeats are the heartbeats of hosts agents in namespace through client, every interval; the nodes'
// names and UIDs are filled in as the load creates them.
func newHeartbeats(client agent.HeartbeatClient, namespace string, interval time.Duration, hosts int) *heartbeats {
	h := &heartbeats{namespace: namespace, interval: interval, nodes: make([]string, hosts), uids: make([]types.UID, hosts),
		beats: make([]agent.Heartbeat, hosts), busy: make([]atomic.Bool, hosts)}
	for i := range h.beats {
		h.beats[i] = agent.Heartbeat{Client: client, Namespace: namespace, Interval: interval}
	}
	return h
}

// beat renews node i's Lease once, as its agent does.
func (h *heartbeats) beat(ctx context.Context, i int) error {
	owner := func(context.Context) (*metav1.OwnerReference, error) {
		return &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: h.nodes[i], UID: h.uids[i]}, nil
	}
	return h.beats[i].Beat(ctx, h.nodes[i], time.Now(), owner)
}

// targetPerSecond is the rate the agents of the load renew at.
func (h *heartbeats) targetPerSecond() float64 { return float64(len(h.nodes)) / h.interval.Seconds() }

// start renews the Leases until stopped: a pacer hands out renewals as they fall due (node i at i·interval/N
// past each interval's start) to heartbeatWorkers workers. A renewal that falls due while its agent's last one
// is still on its way, or while every worker is busy and as many wait, is late: it is counted and not sent then
// (an agent whose renewal is slow renews an interval after it, not twice at once), so the achieved rate
// (renewals over time) drops below the target.
func (h *heartbeats) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	due := make(chan int, heartbeatWorkers)
	for range heartbeatWorkers {
		h.done.Go(func() {
			for i := range due {
				err := h.beat(ctx, i)
				h.busy[i].Store(false)
				switch {
				case err == nil:
					h.sent.Add(1)
				case ctx.Err() == nil:
					h.failed.Add(1)
					h.lastErr.Store(err)
				}
			}
		})
	}
	h.done.Go(func() {
		defer close(due)
		t0 := time.Now()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		n := int64(0) // renewals fallen due
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				for wanted := int64(now.Sub(t0).Seconds() * h.targetPerSecond()); n < wanted; n++ {
					i := int(n % int64(len(h.nodes)))
					if !h.busy[i].CompareAndSwap(false, true) {
						h.late.Add(1)
						continue
					}
					select {
					case due <- i:
					default:
						h.busy[i].Store(false)
						h.late.Add(1)
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
