package aggregator

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/fabricmap/fabricmap/wellknown"
)

// TestConfirmationChanged: only a confirmation set, changed or removed on the guard's own Lease starts a pass;
// the leader's renewals and other annotations do not.
func TestConfirmationChanged(t *testing.T) {
	key := types.NamespacedName{Namespace: "fabricmap-system", Name: "fabricmap-aggregator"}
	lease := func(name, confirm string, renewed int32, more map[string]string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: name, Annotations: map[string]string{}},
			Spec: coordinationv1.LeaseSpec{LeaseTransitions: ptr.To(renewed)}}
		if confirm != "" {
			l.Annotations[wellknown.ConfirmDeletionsAnnotation] = confirm
		}
		for k, v := range more {
			l.Annotations[k] = v
		}
		return l
	}
	const at, later = "2026-11-28T07:00:00Z", "2026-11-28T07:05:00Z"
	cases := []struct {
		name     string
		old, new *coordinationv1.Lease // old nil: a create
		want     bool
	}{
		{name: "created with a confirmation", new: lease(key.Name, at, 0, nil), want: true},
		{name: "created without one", new: lease(key.Name, "", 0, nil)},
		{name: "a confirmation set", old: lease(key.Name, "", 0, nil), new: lease(key.Name, at, 0, nil), want: true},
		{name: "a confirmation changed", old: lease(key.Name, at, 0, nil), new: lease(key.Name, later, 0, nil), want: true},
		{name: "a confirmation removed", old: lease(key.Name, at, 0, nil), new: lease(key.Name, "", 0, nil), want: true},
		{name: "renewed, the confirmation unchanged", old: lease(key.Name, at, 0, nil), new: lease(key.Name, at, 1, nil)},
		{name: "another annotation changed", old: lease(key.Name, at, 0, nil),
			new: lease(key.Name, at, 0, map[string]string{wellknown.HyperNodeCRDAnnotation: "installed"})},
		{name: "another Lease confirmed", old: lease("other", "", 0, nil), new: lease("other", at, 0, nil)},
	}
	p := confirmationChanged(key)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got bool
			if c.old == nil {
				got = p.Create(event.TypedCreateEvent[*coordinationv1.Lease]{Object: c.new})
			} else {
				got = p.Update(event.TypedUpdateEvent[*coordinationv1.Lease]{ObjectOld: c.old, ObjectNew: c.new})
			}
			if got != c.want {
				t.Errorf("starts a pass = %v, want %v", got, c.want)
			}
		})
	}
}
