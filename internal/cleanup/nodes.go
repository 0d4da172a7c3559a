package cleanup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/workers"
	"github.com/fabricmap/fabricmap/wellknown"
)

// nodeWorkers is how many nodes are cleaned at once (the client's rate limit still bounds the requests).
const nodeWorkers = 16

// cleanNodes takes fabricmap's labels and reservations off every node that has any, a page of nodes at a time.
func cleanNodes(ctx context.Context, c client.Client, o Options) error {
	var errs []error
	opts := []client.ListOption{client.Limit(listPage)}
	for {
		var list corev1.NodeList
		if err := c.List(ctx, &list, opts...); err != nil {
			return errors.Join(append(errs, fmt.Errorf("listing nodes: %w", err))...)
		}
		var todo []*corev1.Node
		for i := range list.Items {
			if n := &list.Items[i]; labelledByFabricmap(n) || reserved(n) {
				todo = append(todo, n)
			}
		}
		errs = append(errs, workers.Run(len(todo), nodeWorkers, func(i int) error {
			n := todo[i]
			var nodeErrs []error
			if labelledByFabricmap(n) {
				nodeErrs = append(nodeErrs, removeLabels(ctx, c, o, n))
			}
			if reserved(n) {
				nodeErrs = append(nodeErrs, releaseReservation(ctx, c, o, n.Name))
			}
			return errors.Join(nodeErrs...)
		})...)
		if list.Continue == "" {
			return errors.Join(errs...)
		}
		opts = append(opts, client.Continue(list.Continue))
	}
}

// labelledByFabricmap reports whether the aggregator's label field manager has applied fields on n.
func labelledByFabricmap(n *corev1.Node) bool {
	return slices.ContainsFunc(n.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == wellknown.LabelFieldManager && f.Operation == metav1.ManagedFieldsOperationApply
	})
}

// removeLabels server-side-applies an empty label set on n as the aggregator's label field manager: the API
// server removes exactly the labels that manager alone owns. A label an admin set, or that another manager
// applied too, stays. The labels removed are those the answer no longer has.
func removeLabels(ctx context.Context, c client.Client, o Options, n *corev1.Node) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": n.Name},
	}}
	opts := []client.ApplyOption{client.FieldOwner(wellknown.LabelFieldManager), client.ForceOwnership}
	if o.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("removing fabricmap's labels from node %s: %w", n.Name, err)
	}
	after := u.GetLabels()
	var gone []string
	for k, v := range n.Labels {
		if _, kept := after[k]; !kept {
			gone = append(gone, k+"="+v)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		o.Removed(Removal{Kind: "Node", Name: n.Name, What: "labels " + strings.Join(gone, ", ")})
	}
	return nil
}

// reserved reports whether n carries the placer's reservation: its taint or its annotations.
func reserved(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Spec.Taints, isReservation) ||
		n.Annotations[wellknown.ReservedForAnnotation] != "" || n.Annotations[wellknown.ReservedUntilAnnotation] != ""
}

func isReservation(t corev1.Taint) bool { return t.Key == wellknown.ReservedTaint }

// releaseReservation takes the placer's reservation taint and annotations off the node (a merge patch checked
// against the node's resourceVersion, retried on conflict). Other taints and annotations stay.
func releaseReservation(ctx context.Context, c client.Client, o Options, name string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !reserved(&n) {
			return nil
		}
		orig := n.DeepCopy()
		var what []string
		for _, t := range n.Spec.Taints {
			if isReservation(t) {
				what = append(what, fmt.Sprintf("taint %s=%s:%s", t.Key, t.Value, t.Effect))
			}
		}
		if gang := n.Annotations[wellknown.ReservedForAnnotation]; gang != "" {
			what = append(what, "reservation for "+gang)
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, isReservation)
		delete(n.Annotations, wellknown.ReservedForAnnotation)
		delete(n.Annotations, wellknown.ReservedUntilAnnotation)
		opts := []client.PatchOption{}
		if o.DryRun {
			opts = append(opts, client.DryRunAll)
		}
		if err := c.Patch(ctx, &n, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), opts...); err != nil {
			return client.IgnoreNotFound(err)
		}
		if len(what) == 0 {
			what = append(what, "reservation annotations")
		}
		o.Removed(Removal{Kind: "Node", Name: name, What: strings.Join(what, ", ")})
		return nil
	})
	if err != nil {
		return fmt.Errorf("releasing the placer's reservation of node %s: %w", name, err)
	}
	return nil
}
