package aggregator

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/wellknown"
)

func TestStatusYielded(t *testing.T) {
	entry := func(manager, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Subresource: sub, Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	ours := entry(wellknown.AggregatorFieldManager, "status", `{"f:status":{"f:nodeCount":{}}}`)
	volcano := metav1.ManagedFieldsEntry{Manager: "vc-controller-manager", Subresource: "status", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:nodeCount":{}}}`)}}
	for _, tc := range []struct {
		name   string
		count  int64
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{name: "no count yet: fabricmap writes it", count: 0},
		{name: "fabricmap's own count", count: 16, fields: []metav1.ManagedFieldsEntry{ours}},
		{name: "Volcano took the count", count: 3, fields: []metav1.ManagedFieldsEntry{volcano}, want: true},
		{name: "fabricmap's spec apply only: the count is someone else's", count: 3,
			fields: []metav1.ManagedFieldsEntry{entry(wellknown.AggregatorFieldManager, "", `{"f:spec":{"f:tier":{}}}`)}, want: true},
		{name: "fabricmap's status entry without the count", count: 3,
			fields: []metav1.ManagedFieldsEntry{entry(wellknown.AggregatorFieldManager, "status", `{"f:status":{}}`)}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s statusYielded
			cur := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "fabric", ManagedFields: tc.fields},
				Status: topologyv1alpha1.HyperNodeStatus{NodeCount: tc.count}}
			got, first := s.yielded(cur)
			if got != tc.want || first != tc.want {
				t.Fatalf("yielded = %v (first %v), want %v", got, first, tc.want)
			}
			if !tc.want {
				return
			}
			// Once yielded, for good: a count the other writer set to zero does not hand it back.
			cur.Status.NodeCount, cur.ManagedFields = 0, nil
			if again, first := s.yielded(cur); !again || first {
				t.Errorf("after the other writer zeroed the count: yielded = %v (first %v), want true (not first)", again, first)
			}
			s.forget("fabric")
			if again, _ := s.yielded(cur); again {
				t.Error("after forget (the HyperNode deleted): still yielded")
			}
		})
	}
}
