package aggregator

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// lastAppliedAnnotation is kubectl's copy of an object as last applied: often the largest part of a Node's
// metadata, never read here.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// trimForCache is the informers' transform: every object the aggregator caches (Nodes' metadata, reports,
// heartbeat Leases, owned HyperNodes) keeps of its managed fields only the entries of the aggregator's own
// field managers, which it reads to know what it owns (ownedLabels, ownedOf), each entry's field set shared
// with the Nodes that have the same one (sharedFields), and loses kubectl's last-applied copy. At 50,000
// nodes the other managers' entries (the kubelet's, the agents', controllers') are most of the cache. It changes the object in place: the informer hands over a freshly decoded one.
func trimForCache(obj any) (any, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil // a tombstone or another wrapper: as it is
	}
	if fields := o.GetManagedFields(); len(fields) > 0 {
		kept := fields[:0]
		for _, f := range fields {
			if f.Manager == wellknown.LabelFieldManager || f.Manager == wellknown.AggregatorFieldManager {
				f.Manager, f.APIVersion, f.FieldsType = intern(f.Manager), intern(f.APIVersion), intern(f.FieldsType)
				if f.FieldsV1 != nil && f.Manager == wellknown.LabelFieldManager { // a HyperNode's entry names its own members
					f.FieldsV1 = sharedFields(f.FieldsV1)
				}
				kept = append(kept, f)
			}
		}
		// A new array of the entries kept: in the decoded one the dropped entries would stay past len(kept), and
		// with them their field sets (the kubelet's names every image and condition of the Node).
		var own []metav1.ManagedFieldsEntry
		if len(kept) > 0 {
			own = slices.Clip(append(make([]metav1.ManagedFieldsEntry, 0, len(kept)), kept...))
		}
		o.SetManagedFields(own)
	}
	if a := o.GetAnnotations(); a != nil {
		if _, ok := a[lastAppliedAnnotation]; ok {
			delete(a, lastAppliedAnnotation)
			o.SetAnnotations(a)
		}
	}
	return obj, nil
}

// sharedFields returns the one copy of the field set f holds: an entry names keys, not values, so the 50,000
// Nodes fabricmap labels alike hold a handful of distinct ones. The copies are read only (ownedKeys parses
// them; nothing writes a cached object's managed fields); the memo is emptied when it reaches ownedMemoMax
// entries, as ownedMemo is.
func sharedFields(f *metav1.FieldsV1) *metav1.FieldsV1 {
	fieldsMemo.Lock()
	defer fieldsMemo.Unlock()
	if shared, ok := fieldsMemo.m[string(f.Raw)]; ok {
		return shared
	}
	if len(fieldsMemo.m) >= ownedMemoMax {
		fieldsMemo.m = map[string]*metav1.FieldsV1{}
	}
	fieldsMemo.m[string(f.Raw)] = f
	return f
}

// fieldsMemo holds the field sets sharedFields hands out.
var fieldsMemo = struct {
	sync.Mutex
	m map[string]*metav1.FieldsV1
}{m: map[string]*metav1.FieldsV1{}}
