package aggregator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// TestOwnedKeys: the keys a manager applied, from its apply entries only, the same whether parsed or
// remembered, and the union when it has two entries.
func TestOwnedKeys(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}
	}
	labels := `{"f:metadata":{"f:labels":{"f:a":{},"f:b":{}},"f:annotations":{"f:x":{}}}}`
	more := `{"f:metadata":{"f:labels":{"f:c":{}}}}`
	for _, tc := range []struct {
		name                   string
		fields                 []metav1.ManagedFieldsEntry
		wantLabels, wantAnnots map[string]bool
	}{
		{"none", nil, map[string]bool{}, map[string]bool{}},
		{"its apply entry", []metav1.ManagedFieldsEntry{entry(wellknown.LabelFieldManager, metav1.ManagedFieldsOperationApply, labels)},
			map[string]bool{"a": true, "b": true}, map[string]bool{"x": true}},
		{"another manager's and an update are not its own", []metav1.ManagedFieldsEntry{
			entry("kubelet", metav1.ManagedFieldsOperationApply, labels), entry(wellknown.LabelFieldManager, metav1.ManagedFieldsOperationUpdate, labels)},
			map[string]bool{}, map[string]bool{}},
		{"two entries: their union", []metav1.ManagedFieldsEntry{
			entry(wellknown.LabelFieldManager, metav1.ManagedFieldsOperationApply, labels), entry(wellknown.LabelFieldManager, metav1.ManagedFieldsOperationApply, more)},
			map[string]bool{"a": true, "b": true, "c": true}, map[string]bool{"x": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for pass := range 2 { // parsed, then remembered
				got := ownedKeys(tc.fields, wellknown.LabelFieldManager)
				if diff := cmp.Diff(tc.wantLabels, got.labels); diff != "" {
					t.Errorf("pass %d: labels (-want +got):\n%s", pass, diff)
				}
				if diff := cmp.Diff(tc.wantAnnots, got.annotations); diff != "" {
					t.Errorf("pass %d: annotations (-want +got):\n%s", pass, diff)
				}
			}
		})
	}
}
