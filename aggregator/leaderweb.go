package aggregator

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// leaderWebTTL is how long a found leader address is reused: the page polls every 15 s per viewer, and a
// leader changes rarely.
const leaderWebTTL = 5 * time.Second

// LeaderWeb finds the web page of the replica that holds the leader-election Lease, so that a standby can
// pass requests on to it (web.ForwardToLeader). The Lease's holder is "<pod name>_<random>" (controller-
// runtime's identity: the host name, which is the pod's name); the pod's IP and the web port give the address.
type LeaderWeb struct {
	// Reader reads the Lease and the leader's Pod (uncached: two GETs at most every leaderWebTTL).
	Reader client.Reader
	// Namespace and LeaseName locate the leader-election Lease.
	Namespace, LeaseName string
	// Self is this replica's pod name: a Lease it holds means there is no one to forward to.
	Self string
	// Port is the web page's port on every replica.
	Port int

	mu    sync.Mutex
	url   *url.URL
	until time.Time
}

// URL returns the leader's web page, or nil when this replica leads or nobody does.
func (l *LeaderWeb) URL(ctx context.Context) (*url.URL, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Now().Before(l.until) {
		return l.url, nil
	}
	u, err := l.find(ctx)
	if err != nil {
		return nil, err
	}
	l.url, l.until = u, time.Now().Add(leaderWebTTL)
	return u, nil
}

func (l *LeaderWeb) find(ctx context.Context) (*url.URL, error) {
	var lease coordinationv1.Lease
	if err := l.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: l.LeaseName}, &lease); err != nil {
		return nil, fmt.Errorf("reading the leader-election Lease %s/%s: %w", l.Namespace, l.LeaseName, err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return nil, nil
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	if pod == l.Self {
		return nil, nil
	}
	var p corev1.Pod
	if err := l.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: pod}, &p); err != nil {
		return nil, fmt.Errorf("reading the leader's pod %s/%s: %w", l.Namespace, pod, err)
	}
	if p.Status.PodIP == "" {
		return nil, fmt.Errorf("the leader's pod %s/%s has no IP yet", l.Namespace, pod)
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(l.Port))}, nil
}
