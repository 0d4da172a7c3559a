package aggregator

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Heartbeats tracks the agents' heartbeat Leases: for each node, when the aggregator last saw its Lease
// change. Time is the aggregator's own clock, never the renewTime an agent wrote, so a node with a skewed
// clock is judged fairly; a Lease first seen (at start, or after a leader change) counts as renewed now, so
// a new leader gives every agent a whole expiry before judging it.
type Heartbeats struct {
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu    sync.Mutex
	beats map[string]beat
}

type beat struct {
	version string // the Lease's resourceVersion when seen
	seen    time.Time
}

func (h *Heartbeats) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Observe records the Lease of node at resourceVersion version. It returns when the node's agent was last
// heard of before this (zero when it was not known), so the caller can tell whether it had gone silent.
func (h *Heartbeats) Observe(node, version string) (previous time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.beats == nil {
		h.beats = map[string]beat{}
	}
	b, known := h.beats[node]
	if known && b.version == version {
		return b.seen
	}
	h.beats[node] = beat{version: version, seen: h.now()}
	return b.seen
}

// Forget drops node's heartbeat (its Lease was deleted): its report no longer expires.
func (h *Heartbeats) Forget(node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.beats, node)
}

// Silence returns how long node's agent has not renewed its Lease; ok is false when the node has no Lease
// (an agent with the heartbeat turned off), whose report never expires.
func (h *Heartbeats) Silence(node string) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.beats[node]
	if !ok {
		return 0, false
	}
	return h.now().Sub(b.seen), true
}

// Silent counts, among the nodes for which counted says true, the agents with a heartbeat and those of them
// silent for longer than threshold.
func (h *Heartbeats) Silent(threshold time.Duration, counted func(node string) bool) (silent, total int) {
	if h == nil {
		return 0, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for node, b := range h.beats {
		if !counted(node) {
			continue
		}
		total++
		if now.Sub(b.seen) > threshold {
			silent++
		}
	}
	return silent, total
}

// Restart counts every agent silent longer than threshold as heard of now: after an outage of the API
// server, those that have not renewed yet get a whole expiry again.
func (h *Heartbeats) Restart(threshold time.Duration) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for n, b := range h.beats {
		if now.Sub(b.seen) > threshold {
			h.beats[n] = beat{version: b.version, seen: now}
		}
	}
}

// NextDeadline returns the shortest time until some node's silence passes one of the thresholds (for
// example the expiry, and the expiry plus the grace period); zero when none lies ahead.
func (h *Heartbeats) NextDeadline(thresholds ...time.Duration) time.Duration {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var next time.Duration
	for _, b := range h.beats {
		silent := now.Sub(b.seen)
		for _, th := range thresholds {
			if left := th - silent; th > 0 && left > 0 && (next == 0 || left < next) {
				next = left
			}
		}
	}
	return next
}

// LeaseHandler feeds the Heartbeats from the watch of heartbeat Leases. A renewal triggers no reconcile (at
// 10,000 nodes they arrive all the time and change nothing); only a Lease renewed after its agent had been
// silent longer than expiry does, so that the node comes back into the tree at once. Expiries themselves come
// from the reconciler's requeue at the next deadline.
func (h *Heartbeats) LeaseHandler(expiry time.Duration) handler.EventHandler {
	observe := func(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok || l.Spec.HolderIdentity == nil || l.Name != v1alpha1.HeartbeatLeaseName(*l.Spec.HolderIdentity) {
			return // not an agent's heartbeat (the admission policy makes agents write only their own)
		}
		prev := h.Observe(*l.Spec.HolderIdentity, l.ResourceVersion)
		if !prev.IsZero() && h.now().Sub(prev) > expiry {
			q.Add(Request)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			observe(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			observe(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if l, ok := e.Object.(*coordinationv1.Lease); ok && l.Spec.HolderIdentity != nil {
				h.Forget(*l.Spec.HolderIdentity)
				q.Add(Request)
			}
		},
	}
}

// compactLease is the heartbeat Lease informer's transform: trimForCache's trim, then only what LeaseHandler
// reads (the name, the holder and the resource version, with what keys it in the cache: namespace and UID). At
// 50,000 nodes there are 50,000 of them; their labels, owner references and times are never read. It changes
// the object in place: the informer hands over a freshly decoded one.
func compactLease(obj any) (any, error) {
	obj, err := trimForCache(obj)
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || err != nil {
		return obj, err
	}
	l.ObjectMeta = metav1.ObjectMeta{Name: l.Name, Namespace: intern(l.Namespace), UID: l.UID, ResourceVersion: l.ResourceVersion}
	l.APIVersion, l.Kind = intern(l.APIVersion), intern(l.Kind)
	l.Spec = coordinationv1.LeaseSpec{HolderIdentity: l.Spec.HolderIdentity}
	return l, nil
}
