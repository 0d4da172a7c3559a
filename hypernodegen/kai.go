package hypernodegen

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabricmap/fabricmap/topology"
)

// NVIDIA KAI Scheduler's Topology (kai.scheduler/v1alpha1, cluster-scoped): the levels a workload's
// annotations name. A pod group picks the Topology by name with KAITopologyAnnotation and the level its pods
// must (KAIRequiredPlacementAnnotation) or should (KAIPreferredPlacementAnnotation) share by its node-label key.
const (
	// KAITopologyAnnotation names, on a workload or pod, the KAI Topology its pods are placed by.
	KAITopologyAnnotation = "kai.scheduler/topology"
	// KAIRequiredPlacementAnnotation is the node-label key of the level all pods of the group must share.
	KAIRequiredPlacementAnnotation = "kai.scheduler/topology-required-placement"
	// KAIPreferredPlacementAnnotation is the node-label key of the level all pods of the group should share.
	KAIPreferredPlacementAnnotation = "kai.scheduler/topology-preferred-placement"
)

// KAITopologyGVK is the group, version and kind of KAI Scheduler's Topology.
var KAITopologyGVK = schema.GroupVersionKind{Group: "kai.scheduler", Version: "v1alpha1", Kind: "Topology"}

// KAITopology returns NVIDIA KAI Scheduler's Topology named name: spec.levels[].nodeLabel are the levels
// KueueTopology gives for the same tree and keys (the label-keyed tiers top first, kubernetes.io/hostname last,
// which KAI, like Kueue, allows only as the lowest level). KAI's schema refuses any change of the levels, so a
// tree whose depth changes needs the object deleted and created again. The object is unstructured because
// KAI's Go module is not available here.
func KAITopology(name string, keys LabelKeys, tree *topology.Tree) (*unstructured.Unstructured, error) {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil, fmt.Errorf("KAI Topology name %q is invalid: %s", name, msgs[0])
	}
	levels, err := hostnameLevels(keys, tree, "KAI")
	if err != nil {
		return nil, fmt.Errorf("building KAI Topology %s: %w", name, err)
	}
	items := make([]any, 0, len(levels))
	for _, key := range levels {
		items = append(items, map[string]any{"nodeLabel": key})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"levels": items},
	}}
	u.SetGroupVersionKind(KAITopologyGVK)
	u.SetName(name)
	u.SetLabels(OwnedSelector())
	return u, nil
}
