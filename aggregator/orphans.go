package aggregator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// dropOrphans returns the reports whose node still exists. A report that names a Node as its owner is an
// orphan when no Node of that name exists any more, or when the Node of that name is a new object (another
// UID): the node was deleted, and its links are no evidence. Orphans are deleted, as the garbage collector
// would (the aggregator does it at once, so that no reconcile counts a deleted node and no cluster without a
// running garbage collector keeps them). Reports without a Node owner (made by hand) are kept as they are.
func (r *Reconciler) dropOrphans(ctx context.Context, reports []v1alpha1.NodeFabricReport) ([]v1alpha1.NodeFabricReport, error) {
	kept := reports[:0]
	for i := range reports {
		rep := &reports[i]
		gone, err := r.ownerNodeGone(ctx, rep)
		if err != nil {
			return nil, err
		}
		if !gone {
			kept = append(kept, *rep)
			continue
		}
		uid := rep.UID
		err = r.Client.Delete(ctx, rep, client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			r.Metrics.writes.WithLabelValues("delete-report").Inc()
			r.Log.Info("deleted the report of a node that no longer exists", "node", rep.Name)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// already gone, or replaced by a new report since it was listed
		default:
			r.Log.Warn("could not delete the report of a node that no longer exists", "node", rep.Name, "err", err)
		}
	}
	return kept, nil
}

// ownerNodeGone reports whether rep is owned by a Node that no longer exists.
func (r *Reconciler) ownerNodeGone(ctx context.Context, rep *v1alpha1.NodeFabricReport) (bool, error) {
	for _, ref := range rep.OwnerReferences {
		if ref.Kind != "Node" || ref.APIVersion != "v1" {
			continue
		}
		node := &metav1.PartialObjectMetadata{}
		node.SetGroupVersionKind(nodeGVK)
		err := r.Client.Get(ctx, client.ObjectKey{Name: ref.Name}, node)
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("reading node %q, owner of its report: %w", ref.Name, err)
		case node.UID != ref.UID:
			return true, nil
		}
	}
	return false, nil
}

var nodeGVK = corev1.SchemeGroupVersion.WithKind("Node")
