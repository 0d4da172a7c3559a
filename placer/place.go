package placer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/wellknown"
)

// place pins every pod of the gang to its node, rank 0 (which records the whole plan) first, then removes the
// gates: all pods are pinned before any gate goes, and a failure leaves the gang gated (the next pass resumes
// the recorded plan); a failure while ungating is retried until every gate is gone.
func (r *Reconciler) place(ctx context.Context, st *Snapshot, g *GatedGang, plan *placement.Plan, log *slog.Logger) outcome {
	for _, n := range st.reservedFor(g.Key) {
		if !slices.Contains(plan.Ranks, n) {
			if err := release(ctx, r.Client, n); err != nil {
				log.Warn("cannot release a reserved node the plan does not use", "node", n, "err", err)
			}
			delete(st.reserved, n)
		}
	}
	// The chosen nodes are reserved before any pod is pinned or ungated: between ungating and binding no
	// other pod may take them (the pods tolerate the taint; pin adds the toleration).
	if err := r.reserveAll(ctx, st, g.Key, plan.Ranks); err != nil {
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonRetrying, "Reserve", "gang %s stays gated: %v", g.Key, err)
		log.Warn("cannot reserve the chosen nodes; the gang stays gated", "err", err)
		return soon
	}
	per := len(plan.Ranks) / max(len(plan.Groups), 1)
	pinRank := func(rank int) error {
		p := g.Pods[rank]
		node := plan.Ranks[rank]
		d := Decision{Gang: g.Key, Node: node, Rank: rank, GangDomain: plan.GangDomain, GangTier: plan.GangTier,
			GroupTier: plan.GroupTier, Explanation: plan.Explanation}
		switch {
		case len(plan.GroupOf) > rank && plan.GroupOf[rank] >= 0 && plan.GroupOf[rank] < len(plan.Groups):
			d.GroupDomain = plan.Groups[plan.GroupOf[rank]]
		case len(plan.GroupOf) == 0 && len(plan.Groups) > 0:
			d.GroupDomain = plan.Groups[min(rank/max(per, 1), len(plan.Groups)-1)]
		}
		if rank == 0 {
			d.Ranks = plan.Ranks
		}
		host := node
		if n := st.nodes[node]; n != nil && n.Labels[wellknown.HostnameLabel] != "" {
			host = n.Labels[wellknown.HostnameLabel]
		}
		if _, err := pin(ctx, r.Client, p, d, host); err != nil {
			return err
		}
		data, _ := json.Marshal(d)
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[wellknown.PlacementAnnotation] = string(data) // later gangs of this pass count it
		return nil
	}
	// Rank 0 first, alone: its decision holds the whole plan, which a pass that stopped while pinning resumes.
	err := pinRank(0)
	if err == nil {
		err = forEach(len(g.Pods)-1, func(i int) error { return pinRank(i + 1) })
	}
	if err != nil {
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonRetrying, "Pin", "gang %s stays gated: %v", g.Key, err)
		log.Warn("cannot pin a pod; the gang stays gated", "err", err)
		return soon
	}
	return r.ungateAll(ctx, g.Key, g.Pods, r.gangObject(g), log)
}

// resumedPlan returns the plan recorded on the gang's rank-0 pod by a pass that stopped while pinning, or nil.
func resumedPlan(g *GatedGang) *placement.Plan {
	d, ok := decisionOf(g.Pods[0])
	if !ok || d.Rank != 0 || len(d.Ranks) != len(g.Pods) {
		return nil
	}
	return &placement.Plan{Gang: g.Key, Ranks: d.Ranks, GangDomain: d.GangDomain, GangTier: d.GangTier, GroupTier: d.GroupTier,
		Explanation: d.Explanation}
}

// ungateAll removes the gate from every pod of a pinned gang; obj receives the Placed Event (nil: the rank-0
// pod).
func (r *Reconciler) ungateAll(ctx context.Context, key string, pods []*corev1.Pod, obj runtime.Object, log *slog.Logger) outcome {
	byRank := slices.Clone(pods)
	slices.SortFunc(byRank, func(a, b *corev1.Pod) int {
		da, _ := decisionOf(a)
		db, _ := decisionOf(b)
		return da.Rank - db.Rank
	})
	var changed atomic.Int64
	err := forEach(len(byRank), func(i int) error {
		ok, err := ungate(ctx, r.Client, byRank[i])
		if ok {
			changed.Add(1)
		}
		return err
	})
	if err != nil {
		log.Warn("cannot remove a gate; retrying", "err", err)
		return soon
	}
	if changed.Load() == 0 {
		return placed
	}
	if obj == nil {
		obj = byRank[0]
	}
	d, _ := decisionOf(byRank[0])
	nodes := make([]string, len(byRank))
	latest := byRank[0].CreationTimestamp.Time
	for i, p := range byRank {
		di, _ := decisionOf(p)
		nodes[i] = di.Node
		if p.CreationTimestamp.After(latest) {
			latest = p.CreationTimestamp.Time
		}
	}
	r.Metrics.placed.Inc()
	r.Metrics.latency.Observe(r.now().Sub(latest).Seconds())
	r.event(obj, corev1.EventTypeNormal, ReasonPlaced, "Place", "ranks 0-%d on %s: %s", len(nodes)-1, strings.Join(nodes, ","), d.Explanation)
	log.Info("gang placed", "nodes", nodes, "explanation", d.Explanation)
	return placed
}

// preempt makes room for the gang: it checks that every victim pod may be evicted (dry run), reserves the
// plan's nodes for the gang, then evicts the victim gangs whole. The gang is placed on a later pass, once the
// evicted pods have left its reserved nodes.
func (r *Reconciler) preempt(ctx context.Context, st *Snapshot, g *GatedGang, plan *placement.Plan, log *slog.Logger) outcome {
	victims := st.victimPods(plan.Victims)
	if err := evictAll(ctx, r.Core, victims, true); err != nil {
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonEvictRefused, "Preempt", "gang %s stays gated: cannot evict %s: %v", g.Key, strings.Join(plan.Victims, ","), err)
		log.Info("eviction refused; retrying later", "victims", plan.Victims, "err", err)
		return waiting
	}
	if err := r.reserveAll(ctx, st, g.Key, plan.Ranks); err != nil {
		log.Warn("cannot reserve the chosen nodes", "err", err)
		return soon
	}
	if err := evictAll(ctx, r.Core, victims, false); err != nil {
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonEvictRefused, "Preempt", "gang %s: evicting %s: %v", g.Key, strings.Join(plan.Victims, ","), err)
		log.Warn("eviction failed; retrying", "victims", plan.Victims, "err", err)
		return soon
	}
	r.Metrics.preempted.Add(float64(len(plan.Victims)))
	told := map[string]bool{}
	for _, p := range victims {
		if key, _ := GangOf(p); !told[key] {
			told[key] = true
			r.event(p, corev1.EventTypeWarning, ReasonPreempted, "Preempt", "gang %s evicted whole to make room for gang %s (priority %d)", key, g.Key, g.Priority)
		}
	}
	r.event(r.gangObject(g), corev1.EventTypeNormal, ReasonPreempting, "Preempt", "evicted gangs %s (%d pods); nodes %s reserved until %s",
		strings.Join(plan.Victims, ","), len(victims), strings.Join(st.reservedFor(g.Key), ","), st.now.Add(r.ReservationTimeout).UTC().Format("15:04:05Z"))
	log.Info("preempting", "victims", plan.Victims, "pods", len(victims), "reserved", st.reservedFor(g.Key))
	return soon
}

// reserveAll reserves the nodes (with repeats) for gang until ReservationTimeout from now, a deadline already
// set for the gang moved to that time, and records them in st so that later gangs of the pass avoid them.
func (r *Reconciler) reserveAll(ctx context.Context, st *Snapshot, gang string, nodes []string) error {
	until := st.now.Add(r.ReservationTimeout)
	for _, n := range slices.Compact(slices.Sorted(slices.Values(nodes))) {
		if err := reserve(ctx, r.Client, n, gang, until); err != nil {
			return fmt.Errorf("reserving node %s for gang %s: %w", n, gang, err)
		}
		st.reserved[n] = Reservation{Node: n, Gang: gang, Until: until}
	}
	return nil
}

// releaseDone releases reservations whose gang has bound (every live pod has a node), is gone, or whose time
// is up (NewSnapshot kept the others in st.reserved); one that cannot be released is kept.
func (r *Reconciler) releaseDone(ctx context.Context, st *Snapshot) {
	for name, node := range st.nodes {
		res, ok := reservationOf(node)
		if !ok {
			continue
		}
		why := st.reservationDone(res)
		if why == "" {
			continue
		}
		if err := release(ctx, r.Client, name); err != nil {
			r.Log.Warn("cannot release a reservation", "node", name, "gang", res.Gang, "err", err)
			st.reserved[name] = res
			continue
		}
		r.event(node, corev1.EventTypeNormal, ReasonReleased, "Release", "reservation for gang %s released: %s", res.Gang, why)
		r.Log.Info("reservation released", "node", name, "gang", res.Gang, "why", why)
	}
}
