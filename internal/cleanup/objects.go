package cleanup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/outputs"
)

// kind is one kind of object fabricmap makes whole: which objects of it are fabricmap's.
type kind struct {
	gk schema.GroupKind
	// namespaced kinds are looked for in Options.Namespace only.
	namespaced bool
	// selector picks fabricmap's objects; nil means every object of the kind (a kind only fabricmap makes).
	selector map[string]string
}

// scheduledOutputs are the objects the aggregator writes for the schedulers, all labelled as fabricmap's: the
// owned kinds of the output registry (outputs.Options.Kinds), each once.
func scheduledOutputs() []kind {
	var o outputs.Options
	var out []kind
	for _, k := range o.Kinds() {
		if k.Owned == nil {
			continue
		}
		next := kind{gk: k.Owned.GroupKind, namespaced: k.Owned.Namespaced, selector: k.Owned.Selector}
		if !slices.ContainsFunc(out, func(have kind) bool {
			return have.gk == next.gk && have.namespaced == next.namespaced && maps.Equal(have.selector, next.selector)
		}) {
			out = append(out, next)
		}
	}
	return out
}

// agentObjects are what the agents write: their heartbeat Leases, then their reports (a kind only fabricmap
// makes; its CRD stays, kept by the chart's resource policy).
var agentObjects = []kind{
	{gk: schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, namespaced: true,
		selector: map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue}},
	{gk: v1alpha1.GroupVersion.WithKind("NodeFabricReport").GroupKind()},
}

// listPage is how many objects one list request returns.
const listPage = 500

// deleteOwned deletes fabricmap's objects of kind k, each only if it is still the object listed (its UID). A
// kind that is not served has none.
func deleteOwned(ctx context.Context, c client.Client, o Options, k kind) error {
	mapping, err := c.RESTMapper().RESTMapping(k.gk)
	if meta.IsNoMatchError(err) {
		o.Log.Debug("kind not served: nothing to remove", "kind", k.gk.String())
		return nil
	}
	if err != nil {
		return fmt.Errorf("finding the API of %s: %w", k.gk, err)
	}
	opts := []client.ListOption{client.Limit(listPage)}
	where := "the cluster"
	if k.namespaced {
		opts = append(opts, client.InNamespace(o.Namespace))
		where = "namespace " + o.Namespace
	}
	if k.selector != nil {
		opts = append(opts, client.MatchingLabels(k.selector))
	}
	var errs []error
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(k.gk.Kind + "List"))
		if err := c.List(ctx, list, opts...); err != nil {
			return errors.Join(append(errs, fmt.Errorf("listing %s in %s: %w", k.gk.Kind, where, err))...)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(mapping.GroupVersionKind)
			if err := deleteOne(ctx, c, o, obj); err != nil {
				errs = append(errs, err)
			}
		}
		if list.Continue == "" {
			return errors.Join(errs...)
		}
		opts = append(opts, client.Continue(list.Continue))
	}
}

// deleteOne deletes obj if it is still the object listed; one already gone (or replaced since) is no error.
func deleteOne(ctx context.Context, c client.Client, o Options, obj *metav1.PartialObjectMetadata) error {
	uid := obj.GetUID()
	opts := []client.DeleteOption{client.Preconditions{UID: &uid}}
	if o.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := c.Delete(ctx, obj, opts...)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil
	case err != nil:
		return fmt.Errorf("deleting %s %s: %w", obj.Kind, objectName(obj.Namespace, obj.Name), err)
	}
	o.Removed(Removal{Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name})
	return nil
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
