package aggregator

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/topology"
)

// guardLease reads the guard's Lease from the API server (the cache holds no Lease of this name); nil when it
// cannot be read: without leader election it may not exist, and an admin may create it to confirm.
func (r *Reconciler) guardLease(ctx context.Context, key types.NamespacedName) *coordinationv1.Lease {
	var lease coordinationv1.Lease
	if err := r.Live.Get(ctx, key, &lease); err != nil {
		if !apierrors.IsNotFound(err) {
			r.Log.Warn("cannot read the Lease that confirms held deletions", "lease", key, "err", fmt.Errorf("reading Lease %s: %w", key, err))
		}
		return nil
	}
	return &lease
}

// leaseEvent records an Event on the leader Lease (its UID when it could be read), when a recorder is set: the
// object that stands for the aggregator itself.
func (r *Reconciler) leaseEvent(key types.NamespacedName, lease *coordinationv1.Lease, eventType, reason, action, format string, args ...any) {
	if r.Events == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: key.Namespace, Name: key.Name}
	if lease != nil {
		ref.UID = lease.UID
	}
	r.Events.Eventf(ref, nil, eventType, reason, action, "%s", topology.Printable(fmt.Sprintf(format, args...)))
}

// fabricEvent records an Event about the whole fabric (action BuildTopology) on the leader Lease,
// DeletionGuard.Lease; without a deletion guard no Lease stands for the aggregator, and only the log says it.
func (r *Reconciler) fabricEvent(ctx context.Context, eventType, reason, format string, args ...any) {
	if r.Config.DeletionGuard == nil || r.Events == nil {
		return
	}
	key := r.Config.DeletionGuard.Lease
	r.leaseEvent(key, r.guardLease(ctx, key), eventType, reason, "BuildTopology", format, args...)
}

// nodeEvent records an Event about evidence on the named Node, when it exists and a recorder is set. The
// recorder folds repeats of one Event into a series, so a problem that stays costs no write per reconcile.
// The message goes through topology.Printable: names from evidence (a switch's, an NVLink domain's) may
// hold control characters that kubectl would print raw.
func (r *Reconciler) nodeEvent(node string, nodes map[string]*metav1.PartialObjectMetadata, eventType, reason, format string, args ...any) {
	n, ok := nodes[node]
	if r.Events == nil || !ok {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node, UID: n.UID}
	r.Events.Eventf(ref, nil, eventType, reason, "BuildTopology", "%s", topology.Printable(fmt.Sprintf(format, args...)))
}
