package aggregator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestTrimForCache: only the aggregator's own managed-field entries and no last-applied copy stay in the cache;
// labels, other annotations and the rest of the object are kept.
func TestTrimForCache(t *testing.T) {
	entry := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply}
	}
	for _, tc := range []struct {
		name        string
		in          metav1.ObjectMeta
		want        metav1.ObjectMeta
		wantManaged []string
	}{
		{
			name: "a node's metadata keeps the label manager's entry",
			in: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "1"},
				Annotations:   map[string]string{lastAppliedAnnotation: "{…}", wellknown.UplinkLostAnnotation: "x"},
				ManagedFields: []metav1.ManagedFieldsEntry{entry("kubelet"), entry(wellknown.LabelFieldManager), entry("kubectl")}},
			want: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "1"},
				Annotations:   map[string]string{wellknown.UplinkLostAnnotation: "x"},
				ManagedFields: []metav1.ManagedFieldsEntry{entry(wellknown.LabelFieldManager)}},
		},
		{
			name: "a report keeps none",
			in:   metav1.ObjectMeta{Name: "n1", ManagedFields: []metav1.ManagedFieldsEntry{entry(wellknown.AgentFieldManager)}},
			want: metav1.ObjectMeta{Name: "n1"},
		},
		{
			name: "a HyperNode keeps the aggregator's entry",
			in:   metav1.ObjectMeta{Name: "leaf", ManagedFields: []metav1.ManagedFieldsEntry{entry(wellknown.AggregatorFieldManager), entry("volcano")}},
			want: metav1.ObjectMeta{Name: "leaf", ManagedFields: []metav1.ManagedFieldsEntry{entry(wellknown.AggregatorFieldManager)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &v1alpha1.NodeFabricReport{ObjectMeta: tc.in}
			out, err := trimForCache(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.(*v1alpha1.NodeFabricReport).ObjectMeta); diff != "" {
				t.Errorf("trimmed metadata (-want +got):\n%s", diff)
			}
		})
	}
	if got, _ := trimForCache("not an object"); got != "not an object" {
		t.Errorf("a non-object came back as %v", got)
	}
}
