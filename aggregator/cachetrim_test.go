package aggregator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
			got := out.(*v1alpha1.NodeFabricReport).ObjectMeta
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("trimmed metadata (-want +got):\n%s", diff)
			}
			// The entries dropped are not held past the end of the entries kept.
			if cap(got.ManagedFields) != len(got.ManagedFields) {
				t.Errorf("the managed fields kept hold %d entries more", cap(got.ManagedFields)-len(got.ManagedFields))
			}
		})
	}
	if got, _ := trimForCache("not an object"); got != "not an object" {
		t.Errorf("a non-object came back as %v", got)
	}
}

// TestCacheSharesFieldSets: Nodes whose label-manager entries name the same keys hold one copy of the field
// set; another set is its own.
func TestCacheSharesFieldSets(t *testing.T) {
	node := func(name, keys string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: wellknown.LabelFieldManager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{` + keys + `}}}`)}}}}}
	}
	fields := func(name, keys string) *metav1.FieldsV1 {
		out, err := trimForCache(node(name, keys))
		if err != nil {
			t.Fatal(err)
		}
		return out.(*metav1.PartialObjectMetadata).ManagedFields[0].FieldsV1
	}
	a, b, c := fields("n1", `"f:leaf":{}`), fields("n2", `"f:leaf":{}`), fields("n3", `"f:spine":{}`)
	if a != b {
		t.Error("two Nodes with the same field set hold two copies")
	}
	if a == c || string(c.Raw) != `{"f:metadata":{"f:labels":{"f:spine":{}}}}` {
		t.Errorf("another field set came back as %s", c.Raw)
	}
}

// TestCompactLeaseKeepsWhatTheHandlerReads: a cached heartbeat Lease keeps its name, holder and version (what
// LeaseHandler reads) and nothing else of its spec, labels or owners.
func TestCompactLeaseKeepsWhatTheHandlerReads(t *testing.T) {
	holder := "gpu-1"
	now := metav1.NowMicro()
	in := &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.HeartbeatLeaseName(holder), Namespace: "fabricmap-system", UID: "u1", ResourceVersion: "42",
			Labels:          map[string]string{v1alpha1.HeartbeatLabel: v1alpha1.HeartbeatLabelValue},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: holder, UID: "n1"}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &now, AcquireTime: &now, LeaseDurationSeconds: ptr.To[int32](120)},
	}
	out, err := compactLease(in.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &coordinationv1.Lease{TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, UID: in.UID, ResourceVersion: in.ResourceVersion},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("cached Lease (-want +got):\n%s", diff)
	}
}
