package aggregator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/wellknown"
)

// labelledNode is a Node's metadata carrying labels, of which LabelFieldManager applied owned.
func labelledNode(name string, labels map[string]string, owned ...string) *metav1.PartialObjectMetadata {
	n := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if len(owned) > 0 {
		raw := `{"f:metadata":{"f:labels":{`
		for i, k := range owned {
			if i > 0 {
				raw += ","
			}
			raw += `"f:` + k + `":{}`
		}
		raw += `}}}`
		n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: wellknown.LabelFieldManager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}}
	}
	return n
}

// TestWithLinkHealth: the label follows DegradedNodes on placed nodes and on nodes the tree does not place
// (whose other fabricmap labels stay as they are); a node healthy again loses it only where fabricmap set it;
// a node without a Node object gets nothing.
func TestWithLinkHealth(t *testing.T) {
	const tier = "network.topology.nvidia.com/leaf"
	nodes := map[string]*metav1.PartialObjectMetadata{
		"placed-slow":    labelledNode("placed-slow", map[string]string{tier: "leaf-a"}, tier),
		"unplaced-down":  labelledNode("unplaced-down", map[string]string{tier: "leaf-old", "admin": "x"}, tier),
		"healed":         labelledNode("healed", map[string]string{tier: "leaf-old", wellknown.LinkHealthLabel: "degraded"}, tier, wellknown.LinkHealthLabel),
		"healed-placed":  labelledNode("healed-placed", map[string]string{tier: "leaf-a", wellknown.LinkHealthLabel: "down"}, tier, wellknown.LinkHealthLabel),
		"admin-labelled": labelledNode("admin-labelled", map[string]string{wellknown.LinkHealthLabel: "down"}),
		"healthy":        labelledNode("healthy", nil),
	}
	r := &Reconciler{health: healthStage{fabricHealth: linkHealth{last: health.Assessment{DegradedNodes: map[string]string{
		"placed-slow": "degraded", "unplaced-down": "down", "no-node-object": "degraded",
	}}}}}
	leafA := map[string]string{tier: "leaf-a"} // one map for the nodes of a domain, as hypernodegen.NodeLabels shares it
	desired := map[string]map[string]string{
		"placed-slow":   leafA,
		"healed-placed": leafA,
		"healthy":       {tier: "leaf-b"},
	}
	r.stageHealth().withLinkHealth(desired, nodes, []string{tier, wellknown.LinkHealthLabel})
	want := map[string]map[string]string{
		"placed-slow":   {tier: "leaf-a", wellknown.LinkHealthLabel: "degraded"},
		"unplaced-down": {tier: "leaf-old", wellknown.LinkHealthLabel: "down"},
		"healed":        {tier: "leaf-old"},
		"healed-placed": {tier: "leaf-a"},
		"healthy":       {tier: "leaf-b"},
	}
	if diff := cmp.Diff(want, desired); diff != "" {
		t.Errorf("desired labels (-want +got):\n%s", diff)
	}
}
