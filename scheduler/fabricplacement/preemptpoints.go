package fabricplacement

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

var (
	_ fwk.PostFilterPlugin = (*Plugin)(nil)
	_ fwk.PermitPlugin     = (*Plugin)(nil)
)

// cyclePreemption returns the preemption GeneratePlacements chose in the pod's PodGroup cycle, with the
// cycle's data; ok is false outside a PodGroup cycle.
func cyclePreemption(state fwk.CycleState) (d *cycleData, ok bool) {
	if !state.IsPodGroupSchedulingCycle() {
		return nil, false
	}
	v, err := state.GetPodGroupSchedulingCycle().Read(cycleKey)
	if err != nil {
		return nil, true
	}
	return v.(*cycleData), true
}

// PostFilter nominates, for a pod of a gang whose placement needs whole gangs preempted (preemptPlacement),
// the node placement planned for its rank, unless that node refuses the pod for a reason preemption does not
// lift; the victims are evicted at Permit, once the whole gang got that far. A pod of a PodGroup cycle without
// such a preemption gets UnschedulableAndUnresolvable, which ends the PostFilter plugins there: no pod-by-pod
// preemption (the in-tree DefaultPreemption after this plugin) evicts part of a gang for part of another. A pod
// outside a PodGroup cycle is left to DefaultPreemption.
func (pl *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	d, inGroup := cyclePreemption(state)
	if !inGroup {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	if d == nil || d.preempt == nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "fabricmap: a gang preempts only as a whole, when its placement needs it")
	}
	node, ok := d.rankNode[pod.UID]
	if !ok {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: pod %s/%s has no node in the plan that preempts", pod.Namespace, pod.Name))
	}
	if st := m.Get(node); st.Code() == fwk.UnschedulableAndUnresolvable {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: node %s, planned for pod %s/%s once the victims leave, refuses it for a reason preemption does not lift: %s",
			node, pod.Namespace, pod.Name, st.Message()))
	}
	d.preempt.nominate()
	klog.FromContext(ctx).V(4).Info("Nominated the planned node for a gang's pod that preempts", "pod", klog.KObj(pod), "node", node, "victims", d.preempt.choice.gangs)
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride}}, fwk.NewStatus(fwk.Success)
}

// Permit evicts the victims of the cycle's preemption once every pod of the gang passed Permit in the
// placement that needs them (so that no gang is evicted for a gang that would not fit after all), and records
// them, so that later cycles of the gang wait until they have left. It never holds or rejects a pod.
func (pl *Plugin) Permit(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, _ string) (*fwk.Status, time.Duration) {
	d, _ := cyclePreemption(state)
	if d == nil || d.preempt == nil || !d.preempt.ready() {
		return nil, 0
	}
	c := d.preempt.choice
	key := podGroupKey(pod)
	pl.preempting.started(key, c.pods)
	if pl.evict == nil {
		return nil, 0
	}
	if err := pl.evict.evict(ctx, key, c.pods, c); err != nil {
		// The gang waits for what was evicted; the next cycle evicts the rest (preemptPlacement).
		klog.FromContext(ctx).Error(err, "Evicting whole gangs for a PodGroup", "podGroup", key, "victims", c.gangs)
	}
	return nil, 0
}
