package aggregator

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fabricmap/fabricmap/wellknown"
)

// confirmations is a watch on the guards' Lease alone (key, the leader-election Lease) that starts a pass the
// moment an admin sets or changes its ConfirmDeletionsAnnotation, so held deletions and rewrites go ahead at
// once rather than at the next poll or unrelated change. The Lease is read through a cache of its own, added to
// mgr, that lists and watches it by name: the manager's Lease cache, when there is one, holds only the agents'
// heartbeats. The leader's renewals (every few seconds) change no annotation and start nothing.
func confirmations(mgr manager.Manager, key types.NamespacedName) (source.Source, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&coordinationv1.Lease{}: {
			Namespaces: map[string]cache.Config{key.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", key.Name),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("cache of Lease %s for confirmations: %w", key, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the cache of Lease %s for confirmations: %w", key, err)
	}
	toFabric := handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, *coordinationv1.Lease) []reconcile.Request {
		return []reconcile.Request{Request}
	})
	return source.Kind(c, &coordinationv1.Lease{}, toFabric, confirmationChanged(key)), nil
}

// confirmationChanged lets through the Lease key when it is created with ConfirmDeletionsAnnotation or the
// annotation's value changes (set, changed or removed).
func confirmationChanged(key types.NamespacedName) predicate.TypedPredicate[*coordinationv1.Lease] {
	confirmed := func(l *coordinationv1.Lease) (string, bool) {
		v, ok := l.Annotations[wellknown.ConfirmDeletionsAnnotation]
		return v, ok
	}
	ours := func(l *coordinationv1.Lease) bool { return l.Namespace == key.Namespace && l.Name == key.Name }
	return predicate.TypedFuncs[*coordinationv1.Lease]{
		CreateFunc: func(e event.TypedCreateEvent[*coordinationv1.Lease]) bool {
			_, ok := confirmed(e.Object)
			return ours(e.Object) && ok
		},
		UpdateFunc: func(e event.TypedUpdateEvent[*coordinationv1.Lease]) bool {
			was, wasSet := confirmed(e.ObjectOld)
			is, isSet := confirmed(e.ObjectNew)
			return ours(e.ObjectNew) && (was != is || wasSet != isSet)
		},
		DeleteFunc:  func(event.TypedDeleteEvent[*coordinationv1.Lease]) bool { return false },
		GenericFunc: func(event.TypedGenericEvent[*coordinationv1.Lease]) bool { return false },
	}
}
