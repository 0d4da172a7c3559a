package hypernodegen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/fabricmap/fabricmap/topology"
)

// maxTopologyLevels is the most levels Kueue's and KAI's Topology schemas accept.
const maxTopologyLevels = 16

// KueueTopology returns a Kueue Topology (kueue.x-k8s.io/v1beta2) named name for Topology Aware Scheduling:
// its levels are the node-label keys of the tree's tiers, from the highest tier present down to the leaf
// (tiers without a key in keys.Tiers are left out), then keys.Accelerator and keys.AcceleratorSubDomain when
// the tree has accelerator domains (none without: NodeLabels writes no NVLink label then), and
// kubernetes.io/hostname last, the lowest level as Kueue requires. An empty or invalid tree, bad
// keys, or more levels than Kueue accepts give an error.
func KueueTopology(name string, keys LabelKeys, tree *topology.Tree) (*kueuev1beta2.Topology, error) {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil, fmt.Errorf("kueue Topology name %q is invalid: %s", name, msgs[0])
	}
	levels, err := hostnameLevels(keys, tree, "Kueue")
	if err != nil {
		return nil, fmt.Errorf("building kueue Topology %s: %w", name, err)
	}
	out := make([]kueuev1beta2.TopologyLevel, 0, len(levels))
	for _, key := range levels {
		out = append(out, kueuev1beta2.TopologyLevel{NodeLabel: key})
	}
	return &kueuev1beta2.Topology{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueuev1beta2.GroupVersion.String(), Kind: "Topology"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: OwnedSelector()},
		Spec:       kueuev1beta2.TopologySpec{Levels: out},
	}, nil
}

// hostnameLevels returns the levels of a Topology in Kueue's form (Kueue's and KAI's, named by scheduler in
// errors): the node-label keys of the tree's label-keyed levels (treeLevels), top first, then
// kubernetes.io/hostname, the node level, last. A tier keyed by the hostname label, or more levels than the
// schedulers accept, is an error.
func hostnameLevels(keys LabelKeys, tree *topology.Tree, scheduler string) ([]string, error) {
	levels, err := treeLevels(keys, tree)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(levels)+1)
	for _, l := range levels {
		if l.key == corev1.LabelHostname {
			return nil, fmt.Errorf("label key %s is reserved for the node level", l.key)
		}
		out = append(out, l.key)
	}
	out = append(out, corev1.LabelHostname)
	if len(out) > maxTopologyLevels {
		return nil, fmt.Errorf("%d levels, %s accepts at most %d", len(out), scheduler, maxTopologyLevels)
	}
	return out, nil
}
