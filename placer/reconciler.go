package placer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/wellknown"
)

// PodGroupGVK is the scheduler-plugins PodGroup the placer reads minMember from.
var PodGroupGVK = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

// LegacyPodGroupGVK is the PodGroup of Koordinator (v1.7 keeps its own copy of the scheduler-plugins types in
// this group) and of scheduler-plugins before v0.28: pods join it with PodGroupLabelLegacy.
var LegacyPodGroupGVK = schema.GroupVersionKind{Group: "scheduling.sigs.k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

// VolcanoPodGroupGVK is Volcano's PodGroup (minMember and networkTopology).
var VolcanoPodGroupGVK = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}

// Request is the single work item: every change leads to one pass over all gated gangs.
var Request = reconcile.Request{}

// Reconciler places gated gangs. Each pass reads the whole cluster, releases reservations that are done or
// lapsed, then handles the gated gangs from the highest priority down.
type Reconciler struct {
	// Reader lists pods, nodes and HyperNodes (a cache).
	Reader client.Reader
	// Client reads live and writes (pods, nodes, evictions, PodGroups, the ClusterNetworkTopology).
	Client client.Client
	// Core is the core/v1 REST client the evictions go through.
	Core rest.Interface
	// Events records Events on gangs; nil records none.
	Events events.EventRecorder
	// Log and Metrics report what happens.
	Log     *slog.Logger
	Metrics *Metrics
	// ReservationTimeout is how long nodes stay reserved for a gang that has not bound.
	ReservationTimeout time.Duration
	// Resync is the longest time between two passes.
	Resync time.Duration
	// Retry is the time to the next pass while a gang waits for victims to leave or a write failed.
	Retry time.Duration
	// Preemption limits whom the placer evicts; the zero value evicts nobody.
	Preemption Preemption
	// AvoidDegraded keeps new placements off nodes whose compute link is sick (Snapshot.AvoidDegraded).
	AvoidDegraded bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	// last is the last consistent topology tree, placed on while the current one is inconsistent.
	last lastTree
}

// outcome is what handling one gang led to.
type outcome int

const (
	placed  outcome = iota // pinned and ungated
	waiting                // stays gated until something changes
	soon                   // stays gated; try again after Retry
)

// Reconcile runs one pass.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	st, pods, err := r.read(ctx)
	var inconsistent *InconsistentTreeError
	switch {
	case errors.Is(err, ErrNoTopology):
		r.Log.Info("nothing placed: the cluster has no topology yet", "err", err)
		return reconcile.Result{RequeueAfter: r.Resync}, nil
	case errors.As(err, &inconsistent):
		r.Log.Warn("nothing placed: the topology tree is inconsistent and no consistent tree has been read since the placer started",
			"err", inconsistent.Err)
		r.Metrics.waiting.Set(float64(r.holdGangs(ctx, pods, err)))
		return reconcile.Result{RequeueAfter: r.Retry}, nil
	case err != nil:
		r.Log.Warn("cannot read the cluster", "err", err)
		return reconcile.Result{RequeueAfter: r.Retry}, nil
	}
	r.releaseDone(ctx, st)
	gangs := pendingGangs(st.pods)
	nWaiting, again := 0, false
	for _, key := range r.order(gangs) {
		switch r.handle(ctx, st, key, gangs[key]) {
		case waiting:
			nWaiting++
		case soon:
			nWaiting++
			again = true
		}
	}
	r.Metrics.waiting.Set(float64(nWaiting))
	if again {
		return reconcile.Result{RequeueAfter: r.Retry}, nil
	}
	return reconcile.Result{RequeueAfter: r.Resync}, nil
}

// now returns the current time.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// read takes the pass's snapshot: pods, nodes, the tree and the reservations. While the current tree is
// inconsistent it places on the last consistent one (Reconciler.fabric); the pods are returned also when no
// tree could be read.
func (r *Reconciler) read(ctx context.Context) (*Snapshot, []corev1.Pod, error) {
	pods, nodes, err := listCluster(ctx, r.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := r.now()
	f, stale, err := r.fabric(ctx, nodes, now)
	if err != nil {
		return nil, pods, err
	}
	st := snapshotOn(f, nodes, pods, now)
	st.AvoidDegraded = r.AvoidDegraded
	st.stale = stale
	return st, pods, nil
}

// pendingGangs groups the live pods of every gang that has at least one gated pod.
func pendingGangs(pods []*corev1.Pod) map[string][]*corev1.Pod {
	all := map[string][]*corev1.Pod{}
	gated := map[string]bool{}
	for _, p := range pods {
		key, _ := GangOf(p)
		if key == "" || p.DeletionTimestamp != nil || finished(p) {
			continue
		}
		all[key] = append(all[key], p)
		gated[key] = gated[key] || Gated(p)
	}
	out := map[string][]*corev1.Pod{}
	for k := range gated {
		if gated[k] {
			out[k] = all[k]
			slices.SortFunc(out[k], func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
		}
	}
	return out
}

// order sorts gangs by priority (highest first), then by age, then by key.
func (r *Reconciler) order(gangs map[string][]*corev1.Pod) []string {
	type item struct {
		key     string
		prio    int32
		created time.Time
	}
	items := make([]item, 0, len(gangs))
	for k, pods := range gangs {
		it := item{key: k, created: pods[0].CreationTimestamp.Time}
		for _, p := range pods {
			if p.Spec.Priority != nil {
				it.prio = max(it.prio, *p.Spec.Priority)
			}
			if p.CreationTimestamp.After(it.created) {
				it.created = p.CreationTimestamp.Time
			}
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(b.prio, a.prio), a.created.Compare(b.created), cmp.Compare(a.key, b.key))
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.key
	}
	return out
}

// podGroup reads the gang's PodGroup (scheduler-plugins', Koordinator's or Volcano's); nil when it (or its CRD)
// does not exist. A pod that joins by PodGroupLabelLegacy names a PodGroup of LegacyPodGroupGVK (Koordinator)
// or, failing that, of PodGroupGVK.
func (r *Reconciler) podGroup(ctx context.Context, key string, pods []*corev1.Pod) (*unstructured.Unstructured, error) {
	var kinds []schema.GroupVersionKind
	switch _, form := GangOf(pods[0]); {
	case form == FormPodGroup && pods[0].Labels[wellknown.PodGroupLabel] == "":
		kinds = []schema.GroupVersionKind{LegacyPodGroupGVK, PodGroupGVK}
	case form == FormPodGroup:
		kinds = []schema.GroupVersionKind{PodGroupGVK}
	case form == FormVolcano:
		kinds = []schema.GroupVersionKind{VolcanoPodGroupGVK}
	}
	for _, gvk := range kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: pods[0].Namespace, Name: key[len(pods[0].Namespace)+1:]}, u)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading PodGroup %s (%s): %w", key, gvk.Group, err)
		}
		return u, nil
	}
	return nil, nil
}

// handle moves one gated gang as far as it can go in this pass.
func (r *Reconciler) handle(ctx context.Context, st *Snapshot, key string, pods []*corev1.Pod) outcome {
	log := r.Log.With("gang", key)
	if allPinned(pods) {
		return r.ungateAll(ctx, key, pods, nil, log)
	}
	pg, err := r.podGroup(ctx, key, pods)
	if err != nil {
		log.Warn("cannot read the PodGroup", "err", err)
		return soon
	}
	_, form := GangOf(pods[0])
	g, err := newGang(key, form, pods, pg)
	if err != nil {
		return r.fault(pods[0], pg, err, log)
	}
	if len(pods) < g.MinMember {
		log.Debug("gang incomplete", "pods", len(pods), "minMember", g.MinMember)
		return waiting
	}
	if err := g.Validate(); err != nil {
		return r.fault(pods[0], pg, err, log)
	}
	for _, p := range g.Pods {
		if _, pinned := decisionOf(p); !Gated(p) && !pinned {
			return r.fault(p, pg, &FaultError{Gang: key, Fault: "pod " + p.Name + " is not gated by " + wellknown.Gate}, log)
		}
	}
	req, err := st.placementGang(g)
	if err != nil {
		return r.fault(g.Pods[0], pg, err, log)
	}
	if plan := resumedPlan(g); plan != nil {
		log.Info("resuming a recorded plan", "nodes", plan.Ranks)
		return r.place(ctx, st, g, plan, log)
	}
	if node := st.victimsLeaving(key); node != "" {
		log.Info("waiting for evicted pods to leave the reserved nodes", "node", node)
		return soon
	}
	c, _, err := st.Cluster(g.Key, g.Pods[0].Spec.Tolerations, r.Preemption)
	if err != nil {
		log.Error("cannot build the placement snapshot", "err", err)
		return soon
	}
	skipped := st.SkippedForLinks(g.Key, g.Pods[0].Spec.Tolerations, req.PodRequest())
	if len(skipped) > 0 {
		log.Info("nodes skipped for degraded links", "nodes", skipped)
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		free := map[string]int64{}
		for _, n := range st.fabric.Nodes() {
			free[n] = c.Free(n, "nvidia.com/gpu")
		}
		log.Debug("placing", "pods", req.Pods, "dp", req.DP, "pp", req.PP, "request", req.Request, "roles", req.Roles, "hardTier", req.HardTier, "freeGPUs", free)
	}
	plan, err := c.Place(req)
	if errors.Is(err, placement.ErrNoPlacement) {
		plan, err = r.preemptPlan(c, g, req, err)
	}
	var inErr *placement.InputError
	switch {
	case errors.As(err, &inErr): // valid as declared, but not on this cluster (too large, an unknown resource)
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonUnplaceable, "Place", "gang %s stays gated: it can never fit: %v", key, err)
		log.Info("gang can never fit", "reason", err)
		return waiting
	case err != nil:
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonUnplaceable, "Place", "gang %s stays gated: %v%s%s", key, err, skippedNote(skipped), st.stale.note())
		log.Info("gang unplaceable", "reason", err)
		return waiting
	}
	plan.Explanation += skippedNote(skipped) + st.stale.note()
	if st.stale != nil {
		r.event(r.gangObject(g), corev1.EventTypeWarning, ReasonStaleTopology, "Place", "gang %s planned on the last consistent topology tree (read at %s): the current one is inconsistent: %s",
			key, st.stale.at.UTC().Format(time.RFC3339), st.stale.problem)
		log.Warn("planned on the last consistent topology tree", "consistentAt", st.stale.at.UTC().Format(time.RFC3339), "inconsistency", st.stale.problem)
	}
	g.inRankOrder(plan)
	if len(plan.Victims) > 0 {
		return r.preempt(ctx, st, g, plan, log)
	}
	return r.place(ctx, st, g, plan, log)
}

// preemptPlan asks placement for a plan that evicts lower-priority gangs, when the gang may preempt at all and
// the plan evicts no more gangs than allowed; noRoom is why the gang does not fit as things are. A refusal
// keeps noRoom in the error and adds the reason, and is counted.
func (r *Reconciler) preemptPlan(c *placement.Cluster, g *GatedGang, req placement.Gang, noRoom error) (*placement.Plan, error) {
	if why := r.Preemption.refusal(g); why != "" {
		r.Metrics.refused.WithLabelValues(refusedPolicy).Inc()
		return nil, fmt.Errorf("%w; it may not preempt: %s", noRoom, why)
	}
	plan, err := c.Preempt(req)
	if err != nil {
		return nil, err
	}
	if why := r.Preemption.tooMany(plan.Victims); why != "" {
		r.Metrics.refused.WithLabelValues(refusedMaxVictims).Inc()
		return nil, fmt.Errorf("%w; not preempting: %s", noRoom, why)
	}
	return plan, nil
}

// allPinned says whether every pod of the gang carries a decision (the gang was placed; some gates may remain).
func allPinned(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if _, ok := decisionOf(p); !ok {
			return false
		}
	}
	return true
}

// fault records a gang that cannot be placed as declared.
func (r *Reconciler) fault(pod *corev1.Pod, pg *unstructured.Unstructured, err error, log *slog.Logger) outcome {
	var obj runtime.Object = pod
	if pg != nil {
		obj = pg
	}
	r.event(obj, corev1.EventTypeWarning, ReasonBadGang, "Place", "%v; the gang stays gated", err)
	log.Warn("invalid gang", "err", err)
	return waiting
}

// gangObject is where the gang's Events go: its PodGroup, else its rank-0 pod.
func (r *Reconciler) gangObject(g *GatedGang) runtime.Object {
	if g.PodGroup != nil {
		return g.PodGroup
	}
	return g.Pods[0]
}

// event records an Event when a recorder is set.
func (r *Reconciler) event(obj runtime.Object, typ, reason, action, format string, args ...any) {
	if r.Events != nil {
		r.Events.Eventf(obj, nil, typ, reason, action, format, args...)
	}
}

// victimsLeaving returns a node reserved for the gang on which evicted pods are still terminating ("" when none).
func (st *Snapshot) victimsLeaving(gang string) string {
	for _, p := range st.pods {
		if p.DeletionTimestamp == nil || finished(p) {
			continue
		}
		if n := targetNode(p); n != "" && st.reserved[n].Gang == gang {
			return n
		}
	}
	return ""
}

// reservedFor returns the nodes reserved for a gang, sorted.
func (st *Snapshot) reservedFor(gang string) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(st.reserved)) {
		if st.reserved[n].Gang == gang {
			out = append(out, n)
		}
	}
	return out
}
