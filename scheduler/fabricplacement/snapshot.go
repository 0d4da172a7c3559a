package fabricplacement

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/wellknown"
)

// snapshot is one PodGroup cycle's view of the cluster for placement: the fabric read from the nodes' labels,
// their free capacity for the gang's pods, and the scheduler's NodeInfo of each node by name.
type snapshot struct {
	lt      *labelTree
	fabric  *placement.Fabric
	cluster *placement.Cluster
	// infos[i] is the NodeInfo of node i of the fabric (Fabric.Nodes order).
	infos []fwk.NodeInfo
	// nodes[i] is node i's capacity as the pods do not matter (Fabric.Nodes order), for keepWithin.
	nodes []placement.Node
	fabricIndex
}

// newSnapshot builds the snapshot of nodes (the parent placement's) for the gang whose pods are like pod: the
// tree from their labels (read with keys; nil: detected), each node's allocatable and requested resources as the scheduler's cache has them
// (assumed pods included), and as unavailable a node the pod may not use (cordoned, its node selector or
// required node affinity unmet, a NoSchedule or NoExecute taint it does not tolerate) or whose compute link
// fabric health judged sick (wellknown.LinkHealthLabel degraded or down: the placer's --avoid-degraded, on by
// default). The cache keeps the tree and the cluster of the nodes' capacities between cycles (cycleView); the
// snapshot applies to its copy only the nodes this pod may not use.
func newSnapshot(logger klog.Logger, cache *treeCache, keys *hypernodegen.LabelKeys, nodes []fwk.NodeInfo, pod *corev1.Pod) (*snapshot, error) {
	v, err := cache.view(nodes, keys)
	if err != nil {
		return nil, err
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	var barred []placement.Node
	for i, ni := range v.infos {
		if ni == nil || v.caps[i].Unavailable || podMayUse(logger, pod, affinity, ni.Node()) {
			continue
		}
		n := v.caps[i]
		n.Unavailable = true
		barred = append(barred, n)
	}
	c := v.cluster
	if len(barred) > 0 {
		if c, _, err = c.WithNodes(barred); err != nil {
			return nil, fmt.Errorf("marking the %d nodes pod %s/%s may not use: %w", len(barred), pod.Namespace, pod.Name, err)
		}
	}
	return &snapshot{lt: v.lt, fabric: v.fabric, cluster: c, infos: v.infos, nodes: v.caps, fabricIndex: v.fabricIndex}, nil
}

// podMayUse says whether pod may run on n as far as its required node affinity (node selector included) and the
// node's NoSchedule and NoExecute taints go; the pod's filters check the rest once a placement is tried.
func podMayUse(logger klog.Logger, pod *corev1.Pod, affinity nodeaffinity.RequiredNodeAffinity, n *corev1.Node) bool {
	if ok, err := affinity.Match(n); !ok || err != nil {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return !untolerated
}

// nodeCapacity is a node for placement as the pod does not matter: allocatable, used (assumed pods included),
// and unavailable when cordoned or its compute link is sick.
func nodeCapacity(ni fwk.NodeInfo) placement.Node {
	n := ni.Node()
	used := resources(ni.GetRequested())
	used[string(corev1.ResourcePods)] = int64(len(ni.GetPods()))
	return placement.Node{Name: n.Name, Allocatable: resources(ni.GetAllocatable()), Used: used,
		Unavailable: n.Spec.Unschedulable || sickLink(n)}
}

// sickLink says whether fabric health judged the node's compute link degraded or down.
func sickLink(n *corev1.Node) bool {
	switch n.Labels[wellknown.LinkHealthLabel] {
	case wellknown.LinkHealthDegraded, wellknown.LinkHealthDown:
		return true
	}
	return false
}

// resources converts the scheduler's resource view to placement's (cpu in millicores, the rest in base units,
// "pods" the number of pods).
func resources(r fwk.Resource) placement.Resources {
	out := placement.Resources{
		string(corev1.ResourceCPU):    r.GetMilliCPU(),
		string(corev1.ResourceMemory): r.GetMemory(),
		string(corev1.ResourcePods):   int64(r.GetAllowedPodNumber()),
	}
	if e := r.GetEphemeralStorage(); e > 0 {
		out[string(corev1.ResourceEphemeralStorage)] = e
	}
	for k, v := range r.GetScalarResources() {
		out[string(k)] = v
	}
	return out
}
