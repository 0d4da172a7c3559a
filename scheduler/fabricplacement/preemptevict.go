package fabricplacement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	apipod "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// Event reasons of a preemption: on each victim pod and victim PodGroup, and on the PodGroup that preempts.
const (
	ReasonPreempted  = "Preempted"
	ReasonPreempting = "Preempting"
)

// evictWorkers is how many pods evict calls the API server for at once, as kube-scheduler's preemption
// executor spreads its calls over its parallelism (16 by default).
const evictWorkers = 16

// evictor evicts victim pods as kube-scheduler's own preemption does (its preemption executor): a pod waiting
// at Permit is sent back to the queue; any other gets the DisruptionTarget condition (reason
// PreemptionByScheduler) and is deleted, and an Event names the PodGroup that preempted it.
type evictor struct {
	client    kubernetes.Interface
	events    events.EventRecorder
	podGroups schedulinglisters.PodGroupLister
	// waiting returns a pod waiting at Permit, nil when none is (or without a handle).
	waiting func(types.UID) fwk.WaitingPod
}

// newEvictor builds the evictor of the scheduler's handle.
func newEvictor(h fwk.Handle, podGroups schedulinglisters.PodGroupLister) *evictor {
	return &evictor{client: h.ClientSet(), events: h.EventRecorder(), podGroups: podGroups, waiting: h.GetWaitingPod}
}

// evict evicts pods, every live pod of the victim gangs, for the PodGroup preemptor ("namespace/name"), and
// records Events: on each victim pod, on each victim PodGroup and on the preemptor. choice says why (nil: the
// rest of an eviction that failed earlier). It goes on past a pod it fails to evict, so that no victim gang is
// left in part for want of trying, and returns the failures joined.
func (e *evictor) evict(ctx context.Context, preemptor string, pods []*corev1.Pod, choice *victimChoice) error {
	logger := klog.FromContext(ctx)
	pg := e.podGroup(preemptor)
	why := fmt.Sprintf("PodGroup %s", preemptor)
	if choice != nil {
		why = fmt.Sprintf("PodGroup %s (priority %d), which needs room in %s (tier %d)", preemptor, choice.prio, choice.plan.GangDomain, choice.plan.GangTier)
	}
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	limit := make(chan struct{}, evictWorkers)
	for i, p := range pods {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			gang := podGroupKey(p)
			if errs[i] = e.evictPod(ctx, p, "fabricmap-scheduler: preempting the whole gang "+gang+" to accommodate the higher-priority "+why); errs[i] != nil {
				return
			}
			e.event(p, pg, ReasonPreempted, "Preempted by fabricmap-scheduler for %s: every pod of gang %s is evicted", why, gang)
			logger.V(2).Info("Preempted a pod of a whole gang", "preemptor", preemptor, "victim", klog.KObj(p), "gang", gang, "node", p.Spec.NodeName)
		})
	}
	wg.Wait()
	if choice == nil {
		return errors.Join(errs...)
	}
	for _, v := range choice.gangs {
		if vg := e.podGroup(v); vg != nil {
			e.event(vg, pg, ReasonPreempted, "Preempted by fabricmap-scheduler for %s: its %d pods are evicted", why, len(choice.victim[v].pods))
		}
	}
	if pg != nil {
		e.event(pg, nil, ReasonPreempting, "fabricmap-scheduler evicts the whole gangs %v (%d pods, each gang of lower priority than %d) to make room in %s (tier %d)",
			choice.gangs, len(choice.pods), choice.prio, choice.plan.GangDomain, choice.plan.GangTier)
	}
	return errors.Join(errs...)
}

// evictPod preempts one pod: a pod waiting at Permit is sent back to the queue; any other gets the
// DisruptionTarget condition with msg and is deleted (only this pod: its UID is a precondition). A pod already
// gone is fine.
func (e *evictor) evictPod(ctx context.Context, p *corev1.Pod, msg string) error {
	if e.waiting != nil {
		if wp := e.waiting(p.UID); wp != nil && wp.Preempt(Name, msg) {
			return nil
		}
	}
	status := p.Status.DeepCopy()
	if apipod.UpdatePodCondition(status, &corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler, Message: msg,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&p.Status, p.Generation, corev1.DisruptionTarget),
	}) {
		if err := util.PatchPodStatus(ctx, e.client, p.Name, p.Namespace, &p.Status, status); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("setting the DisruptionTarget condition of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	err := e.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) { // a conflict: another pod of that name now
		return fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// podGroup returns the PodGroup "namespace/name" from the lister, nil when it is not there.
func (e *evictor) podGroup(key string) *schedulingv1alpha2.PodGroup {
	if e.podGroups == nil {
		return nil
	}
	ns, name, _ := strings.Cut(key, "/")
	pg, err := e.podGroups.PodGroups(ns).Get(name)
	if err != nil {
		return nil
	}
	return pg
}

// event records a Normal Event on regarding, related to related when not nil.
func (e *evictor) event(regarding runtime.Object, related *schedulingv1alpha2.PodGroup, reason, note string, args ...any) {
	if e.events == nil {
		return
	}
	var rel runtime.Object
	if related != nil {
		rel = related
	}
	action := "Preempting"
	e.events.Eventf(regarding, rel, corev1.EventTypeNormal, reason, action, note, args...)
}
