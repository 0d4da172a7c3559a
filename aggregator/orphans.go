package aggregator

import (
	"context"

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
func (es *evidenceStage) dropOrphans(ctx context.Context, reports []*v1alpha1.NodeFabricReport, nodes map[string]*metav1.PartialObjectMetadata) []*v1alpha1.NodeFabricReport {
	kept := reports[:0]
	for i := range reports {
		rep := reports[i]
		if !ownerNodeGone(rep, nodes) {
			kept = append(kept, rep)
			continue
		}
		uid := rep.UID
		err := es.r.Client.Delete(ctx, rep, client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			es.r.Metrics.writes.WithLabelValues("delete-report").Inc()
			es.r.Log.Info("deleted the report of a node that no longer exists", "node", rep.Name)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// already gone, or replaced by a new report since it was listed
		default:
			es.r.Log.Warn("could not delete the report of a node that no longer exists", "node", rep.Name, "err", err)
		}
	}
	return kept
}

// ownerNodeGone reports whether rep is owned by a Node that no longer exists in nodes (by name and UID).
func ownerNodeGone(rep *v1alpha1.NodeFabricReport, nodes map[string]*metav1.PartialObjectMetadata) bool {
	for _, ref := range rep.OwnerReferences {
		if ref.Kind == "Node" && ref.APIVersion == "v1" {
			if n, ok := nodes[ref.Name]; !ok || n.UID != ref.UID {
				return true
			}
		}
	}
	return false
}
