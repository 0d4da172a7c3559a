package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/workers"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/wellknown"
)

// hyperNodeWriter writes Volcano's HyperNodes (outputs.NameHyperNodes), guarded: its plan hook is the guard
// stage's rewrite guard, which judges the HyperNodes and the node labels together and may hold the whole pass,
// then the HyperNodes' plan (the grace period, the deletion guard, the consistency check); its write applies
// what the plan gives. It keeps what it wrote between passes.
type hyperNodeWriter struct {
	// r is the Reconciler whose dependencies (clients, log, metrics, guard stage) it uses.
	r *Reconciler
	// written holds, for each HyperNode written here, its resource versions from before the last write, which
	// the cache may still show (applyHyperNode).
	written writtenVersions
	// statusYielded holds the HyperNodes whose status another writer keeps (statusowner.go).
	statusYielded statusYielded
}

// plan is the HyperNodes' guard hook: the rewrite guard (rewriteguard.go), then the plan of the writes
// (hypernodeplan.go). Either may hold the pass: too many rewrites at once, or HyperNodes the plan would leave
// inconsistent (consistency.go; said, and the last tree stays as written). The writes go alongside the node
// labels'.
func (hw *hyperNodeWriter) plan(ctx context.Context, p *outputPass, _ outputs.Kind) kindPlan {
	gs := hw.r.stageGuard()
	if ok, wait := gs.guardRewrites(ctx, p.desired, p.existing, p.nodes, p.labels); !ok {
		return kindPlan{hold: true, requeue: wait}
	}
	writes, requeue, err := gs.planHyperNodes(ctx, p.desired, p.existing, p.served, p.placed, p.nodes, p.labels)
	if errors.Is(err, errInconsistent) {
		return kindPlan{hold: true, requeue: requeue}
	}
	return kindPlan{alongside: true, requeue: requeue, err: err,
		write: func(ctx context.Context) (time.Duration, error) { return 0, hw.writeHyperNodesServed(ctx, writes) }}
}

// writeHyperNodesServed makes the planned writes (none when w is nil). A write refused because HyperNodes are
// no longer served (their CRD deleted, or being deleted) is no error to retry: the CRD is looked at again at
// once, and the HyperNodes start again when it is back.
func (hw *hyperNodeWriter) writeHyperNodesServed(ctx context.Context, w *hyperNodeWrites) error {
	if w == nil {
		return nil
	}
	err := hw.writeHyperNodes(ctx, w)
	if err != nil && hw.r.hyperNodeCRD != nil && hyperNodesNotServed(err) {
		hw.r.Log.Warn("HyperNodes not written: the API server no longer serves them (CRD deleted?); looking at the CRD again", "err", err)
		hw.r.hyperNodeCRD.lookAgain()
		return nil
	}
	return err
}

// hyperNodeWrites is what a pass writes of the HyperNodes (planWrites).
type hyperNodeWrites struct {
	plan pendingPlan
	due  []string // owned HyperNodes to delete
	have map[string]*topologyv1alpha1.HyperNode
}

// writeHyperNodes makes the writes w plans.
func (hw *hyperNodeWriter) writeHyperNodes(ctx context.Context, w *hyperNodeWrites) error {
	plan, due, have := w.plan, w.due, w.have
	// The writes go several at a time (writeWorkers), within the client's rate limit: the kept ones first, so
	// that no node is in two HyperNodes when the tree's take it, then the tree's, then the deletions.
	if err := errors.Join(workers.Run(len(plan.kept), writeWorkers, func(i int) error {
		return hw.applyHyperNode(ctx, &plan.kept[i], have[plan.kept[i].Name], "kept below the tree until its grace period ends")
	})...); err != nil {
		return err
	}
	taken, err := hw.foreignHyperNodes(ctx, plan.desired, have)
	if err != nil {
		return err
	}
	if err := errors.Join(workers.Run(len(plan.desired), writeWorkers, func(i int) error {
		d := &plan.desired[i]
		if taken[d.Name] {
			hw.r.Metrics.nameConflicts.Inc()
			hw.r.Log.Error("a HyperNode not made by fabricmap already has this name; leaving it alone", "hypernode", d.Name)
			return nil
		}
		return hw.applyHyperNode(ctx, d, have[d.Name], "")
	})...); err != nil {
		return err
	}
	errs := workers.Run(len(due), writeWorkers, func(i int) error {
		hn := have[due[i]]
		err := hw.r.Client.Delete(ctx, hn, client.Preconditions{UID: &hn.UID, ResourceVersion: &hn.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting HyperNode %q: %w", hn.Name, err)
		}
		hw.r.Metrics.writes.WithLabelValues("delete").Inc()
		hw.r.Log.Info("HyperNode deleted", "hypernode", hn.Name)
		return nil
	})
	for i, n := range due {
		if errs[i] == nil {
			hw.r.stageGuard().deleted(n)
			hw.written.forget(n)
			hw.statusYielded.forget(n)
		}
	}
	return errors.Join(errs...)
}

// writeWorkers is how many HyperNode writes are in flight at once; the client's rate limit (--kube-api-qps)
// bounds what reaches the API server.
const writeWorkers = 16

// applyHyperNode server-side-applies d when it differs from cur (nil: it does not exist yet), and its status
// when its node count does and no other writer keeps it (statusowner.go); why, when set, is logged with the write. A cur the cache still shows from before
// this reconciler's own last write of it (writtenVersions) is not written again: the write's watch event brings
// another pass.
func (hw *hyperNodeWriter) applyHyperNode(ctx context.Context, d, cur *topologyv1alpha1.HyperNode, why string) error {
	if cur != nil && hw.written.pending(d.Name) && hw.written.behind(d.Name, cur.ResourceVersion, hyperNodeWrite(d)) {
		hw.r.Log.Debug("HyperNode not written again: the cache does not show the last write yet", "hypernode", d.Name)
		return nil
	}
	var older []string // the versions before the last write made here
	if cur != nil {
		older = append(older, cur.ResourceVersion)
	}
	var version string
	if cur == nil || !specEqual(cur, d) {
		v, err := kube.ApplyVersion(ctx, hw.r.Client, d, wellknown.AggregatorFieldManager)
		if err != nil {
			return err
		}
		version = v
		hw.r.Metrics.writes.WithLabelValues("apply").Inc()
		args := []any{"hypernode", d.Name, "tier", d.Spec.Tier, "members", len(d.Spec.Members), "created", cur == nil}
		if why != "" {
			args = append(args, "why", why)
		}
		hw.r.Log.Info("HyperNode applied", args...)
	}
	if cur == nil || cur.Status.NodeCount != d.Status.NodeCount && !hw.leavesStatus(cur, d) {
		var status runtime.Object = d
		if d.Status.NodeCount == 0 { // an emptied HyperNode waiting for its grace period: the typed status omits a zero count
			status = &unstructured.Unstructured{Object: map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind,
				"metadata": map[string]any{"name": d.Name}, "status": map[string]any{"nodeCount": int64(0)}}}
		}
		if version != "" {
			older = append(older, version)
		}
		v, err := kube.ApplyStatus(ctx, hw.r.Client, status, wellknown.AggregatorFieldManager)
		if err != nil {
			return err
		}
		version = v
		hw.r.Metrics.writes.WithLabelValues("status").Inc()
	}
	if version != "" {
		hw.written.note(d.Name, hyperNodeWrite(d), older...)
	}
	return nil
}

// hyperNodeWrite is a digest of what applyHyperNode writes of d (its labels, annotations, spec and node count),
// equal for equal writes (writtenVersions): a HyperNode whose wish changed while the cache still shows it from
// before the last write is written at once. Without it a HyperNode that one pass wrote, and whose cache then
// kept the version from before (an apply the API server found unchanged), held every later change back.
func hyperNodeWrite(d *topologyv1alpha1.HyperNode) uint64 {
	b, err := json.Marshal(struct {
		Labels, Annotations map[string]string
		Spec                topologyv1alpha1.HyperNodeSpec
		NodeCount           int64
	}{d.Labels, d.Annotations, d.Spec, d.Status.NodeCount})
	if err != nil { // a HyperNode always encodes; were it not to, no write is held back
		return 0
	}
	return maphash.Bytes(writeDigestSeed, b)
}

// leavesStatus reports whether cur's status is another writer's (statusowner.go), saying so once per
// HyperNode with both counts.
func (hw *hyperNodeWriter) leavesStatus(cur, d *topologyv1alpha1.HyperNode) bool {
	yes, first := hw.statusYielded.yielded(cur)
	if first {
		hw.r.Metrics.statusYielded.Inc()
		hw.r.Log.Info("HyperNode status left to another writer (Volcano's HyperNode controller counts members): fabricmap no longer writes it",
			"hypernode", cur.Name, "theirNodeCount", cur.Status.NodeCount, "nodesBelow", d.Status.NodeCount)
	}
	return yes
}

// foreignHyperNodes returns the names among desired that HyperNodes not made by fabricmap already hold (no
// fabricmap ownership label). Only names fabricmap does not hold yet (absent from have) can be taken; one
// live List answers for all of them, not a read per name.
func (hw *hyperNodeWriter) foreignHyperNodes(ctx context.Context, desired []topologyv1alpha1.HyperNode, have map[string]*topologyv1alpha1.HyperNode) (map[string]bool, error) {
	fresh := map[string]bool{}
	for i := range desired {
		if _, ok := have[desired[i].Name]; !ok {
			fresh[desired[i].Name] = true
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNodeList"))
	if err := hw.r.Live.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing HyperNodes to check that the new names are free: %w", err)
	}
	taken := map[string]bool{}
	for _, hn := range list.Items {
		if fresh[hn.Name] && !hypernodegen.Owned(hn.Labels) {
			taken[hn.Name] = true
		}
	}
	return taken, nil
}

// specEqual compares what fabricmap owns of a HyperNode: its spec, its labels and its annotations.
func specEqual(cur, want *topologyv1alpha1.HyperNode) bool {
	if !equality.Semantic.DeepEqual(cur.Spec, want.Spec) {
		return false
	}
	return hasAll(cur.Labels, want.Labels) && hasAll(cur.Annotations, want.Annotations)
}
