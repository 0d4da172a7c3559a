package fabricplacement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/internal/wording"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
)

// preemptPrefix starts the name of the placement that holds the gang once the victims placement chose have
// left.
const preemptPrefix = "fabricmap-preempt:"

// heldGang is a PodGroup whose pods hold nodes, as the scheduler's snapshot has them.
type heldGang struct {
	// key is "namespace/name".
	key string
	// pods are its live pods on any node (not terminating, not finished), by namespace and name.
	pods []*corev1.Pod
	// priority is the highest priority of its live pods.
	priority int32
	// request is the least each resource that any of its pods requests: what evicting one pod frees for sure.
	request placement.Resources
}

// heldGangs collects, from every node's pods, the PodGroups (spec.schedulingGroup) other than self whose live
// pods hold nodes, by key. Terminating and finished pods are no victims (they are leaving already); they still
// count as used on their nodes.
func heldGangs(nodes []fwk.NodeInfo, self string) map[string]*heldGang {
	out := map[string]*heldGang{}
	for _, ni := range nodes {
		for _, pi := range ni.GetPods() {
			p := pi.GetPod()
			key := podGroupKey(p)
			if key == "" || key == self || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			req := podread.Request(p)
			g := out[key]
			if g == nil {
				g = &heldGang{key: key, priority: priority(p), request: req}
				out[key] = g
			} else {
				g.priority = max(g.priority, priority(p))
				for r, q := range g.request {
					g.request[r] = min(q, req[r]) // a resource one pod lacks frees nothing for sure
				}
			}
			g.pods = append(g.pods, p)
		}
	}
	for _, g := range out {
		slices.SortFunc(g.pods, func(a, b *corev1.Pod) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
	}
	return out
}

// podGroupKey is "namespace/name" of the PodGroup the pod joins, "" for a pod in none.
func podGroupKey(p *corev1.Pod) string {
	if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return p.Namespace + "/" + *p.Spec.SchedulingGroup.PodGroupName
}

// priority is the pod's priority, 0 when the priority admission did not set it.
func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// preemptorPriority is the priority a gang preempts with: the lowest of its pods', so that no pod of it
// preempts a gang of its own priority or higher. refusal says why the gang may not preempt at all ("" when it
// may): a pod with preemptionPolicy Never, as kube-scheduler's own preemption honours it.
func preemptorPriority(pods []*corev1.Pod) (prio int32, refusal string) {
	for i, p := range pods {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == corev1.PreemptNever {
			return 0, fmt.Sprintf("pod %s/%s has preemptionPolicy %s", p.Namespace, p.Name, corev1.PreemptNever)
		}
		if i == 0 || priority(p) < prio {
			prio = priority(p)
		}
	}
	return prio, ""
}

// victimChoice is one preemption: the plan that places the gang once the victims have left, the victim
// PodGroups ("namespace/name", sorted) and every live pod of them that holds a node.
type victimChoice struct {
	plan  *placement.Plan
	gangs []string
	pods  []*corev1.Pod
	// prio is the priority the gang preempts with; victim maps each victim gang to what it holds.
	prio   int32
	victim map[string]*heldGang
}

// chooseVictims asks placement which whole PodGroups to evict for gang g (g.Priority set), as the placer and
// `fabricmap place` choose: the lowest tier within g's hard limit, then the fewest victim gangs, then the
// least work lost, only gangs of strictly lower priority. c is the cycle's cluster (left unchanged: the running
// gangs are added to a copy); held are the gangs holding nodes (heldGangs), inTree the fabric's nodes. Only a
// gang's pods on nodes of the tree count as room it frees; all its live pods are evicted. An error wraps
// placement.ErrNoPreemption when no set of victims makes room.
func chooseVictims(c *placement.Cluster, g placement.Gang, held map[string]*heldGang, inTree map[string]int) (*victimChoice, error) {
	cc, _, err := c.WithNodes(nil)
	if err != nil {
		return nil, fmt.Errorf("copying the cluster for preemption: %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(held)) {
		h := held[key]
		r := placement.Running{Name: key, Priority: h.priority, Preemptible: true, Pods: map[string]int{}, Request: h.request}
		for _, p := range h.pods {
			if _, ok := inTree[p.Spec.NodeName]; ok {
				r.Pods[p.Spec.NodeName]++
			}
		}
		if len(r.Pods) == 0 {
			continue // frees nothing in the tree
		}
		if err := cc.AddRunning(r, false); err != nil {
			return nil, fmt.Errorf("adding running gang %s for preemption: %w", key, err)
		}
	}
	plan, err := cc.Preempt(g)
	if err != nil {
		return nil, err
	}
	out := &victimChoice{plan: plan, gangs: slices.Clone(plan.Victims), prio: g.Priority, victim: map[string]*heldGang{}}
	slices.Sort(out.gangs)
	for _, v := range out.gangs {
		h := held[v]
		if h == nil || h.priority >= g.Priority {
			// placement never chooses these; should it, evicting nobody is the safe answer.
			return nil, fmt.Errorf("placement chose %s, which is not a running gang of lower priority than %d (a bug)", v, g.Priority)
		}
		out.victim[v] = h
		out.pods = append(out.pods, h.pods...)
	}
	return out, nil
}

// preemptions remembers, per preempting PodGroup ("namespace/name"), the pods it evicted, until they have left
// the scheduler's snapshot: meanwhile the gang waits, and chooses no other victims.
type preemptions struct {
	mu      sync.Mutex
	pending map[string][]*corev1.Pod
}

// started records that the gang key evicted pods.
func (p *preemptions) started(key string, pods []*corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string][]*corev1.Pod{}
	}
	p.pending[key] = pods
}

// remaining returns the pods the gang key evicted that the snapshot (the pod UIDs on nodes, each with whether
// it is terminating) still holds, and forgets every gang whose evicted pods have all left.
func (p *preemptions) remaining(key string, present map[types.UID]bool) []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*corev1.Pod
	for k, pods := range p.pending {
		var left []*corev1.Pod
		for _, v := range pods {
			if _, ok := present[v.UID]; ok {
				left = append(left, v)
			}
		}
		if len(left) == 0 {
			delete(p.pending, k)
		}
		if k == key {
			out = left
		}
	}
	return out
}

// podsOnNodes maps the UID of every pod on nodes to whether it is terminating.
func podsOnNodes(nodes []fwk.NodeInfo) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, ni := range nodes {
		for _, pi := range ni.GetPods() {
			out[pi.GetPod().UID] = pi.GetPod().DeletionTimestamp != nil
		}
	}
	return out
}

// preemption is one PodGroup cycle's preemption, carried from GeneratePlacements to PostFilter and Permit:
// the choice, and how many of the gang's pods went through Permit in the placement that needs it.
type preemption struct {
	choice *victimChoice
	// want is the number of the gang's pods the cycle places; evict runs once all of them passed Permit.
	want int
	mu   sync.Mutex
	// permitted counts the pods that passed Permit; nominated those that PostFilter nominated; done is set once
	// the victims were evicted.
	permitted, nominated int
	done                 bool
}

// ready counts one more pod through Permit and says whether the victims are to be evicted now: every pod of
// the gang passed Permit, at least one of them only with a nomination (it needs the room), and not yet done.
func (p *preemption) ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.permitted++
	if p.done || p.permitted < p.want || p.nominated == 0 {
		return false
	}
	p.done = true
	return true
}

// nominate counts a pod that PostFilter nominated.
func (p *preemption) nominate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nominated++
}

// preemptPlacement is GeneratePlacements' answer for a gang that does not fit on free capacity (noRoom says
// so): while pods it evicted earlier are still leaving, it waits, evicting the rest of a victim gang whose
// deletion failed; otherwise, when the gang may preempt, it asks chooseVictims and offers the one placement of
// placement's plan, named preemptPrefix + the gang's domain, and leaves the choice in the cycle's data for
// PostFilter (which nominates each pod's planned node) and Permit (which evicts the victims once the whole gang
// passed). A gang with pods already scheduled, one whose pods may not preempt, or one no set of victims makes
// room for gets noRoom with the reason added.
func (pl *Plugin) preemptPlacement(ctx context.Context, state fwk.PodGroupCycleState, key string, pods []*corev1.Pod, snap *snapshot, g placement.Gang, nodes []fwk.NodeInfo, scheduled bool, noRoom *fwk.Status) (*fwk.GeneratePlacementsResult, *fwk.Status) {
	present := podsOnNodes(nodes)
	if left := pl.preempting.remaining(key, present); len(left) > 0 {
		var alive []*corev1.Pod
		for _, p := range left {
			if !present[p.UID] {
				alive = append(alive, p)
			}
		}
		if len(alive) > 0 && pl.evict != nil { // a deletion that failed: finish evicting the whole gang
			pl.evict.evict(ctx, key, alive, nil)
		}
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("fabricmap: waiting for %d %s of the gangs it preempted to leave (%s)",
			len(left), wording.Plural(len(left), "pod", "pods"), podNames(left)))
	}
	for _, p := range pods {
		if n := p.Status.NominatedNodeName; n != "" && terminatingOn(nodes, n) {
			// After a restart the memory above is gone: a terminating pod on a node nominated for the gang is
			// most likely a victim still leaving, as kube-scheduler's own preemption judges it.
			return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("fabricmap: waiting for the terminating pods on node %s, nominated for pod %s/%s, to leave", n, p.Namespace, p.Name))
		}
	}
	if scheduled {
		return nil, withReason(noRoom, "not preempting: some of the gang's pods already run, and only a whole gang is placed by preemption")
	}
	prio, refusal := preemptorPriority(pods)
	if refusal != "" {
		return nil, withReason(noRoom, "it may not preempt: "+refusal)
	}
	g.Priority = prio
	held := heldGangs(nodes, key)
	if !slices.ContainsFunc(slices.Collect(maps.Values(held)), func(h *heldGang) bool { return h.priority < prio }) {
		// Nothing to choose from: spare the search (a pending gang is tried again and again).
		return nil, withReason(noRoom, fmt.Sprintf("preemption cannot help: no running PodGroup has a priority lower than %d", prio))
	}
	choice, err := chooseVictims(snap.cluster, g, held, snap.nodeIndex)
	var inputErr *placement.InputError
	switch {
	case errors.Is(err, placement.ErrNoPreemption), errors.As(err, &inputErr):
		return nil, withReason(noRoom, fmt.Sprintf("preemption cannot help: evicting whole gangs of lower priority than %d leaves no room (%v)", prio, err))
	case err != nil:
		return nil, fwk.AsStatus(fmt.Errorf("choosing whole gangs to preempt for PodGroup %s: %w", key, err))
	}
	state.Write(cycleKey, &cycleData{snap: snap, plan: choice.plan, rankNode: rankNodes(pods, choice.plan.Ranks),
		preempt: &preemption{choice: choice, want: len(pods)}})
	klog.FromContext(ctx).V(2).Info("PodGroup needs whole gangs preempted", "podGroup", key, "victims", choice.gangs,
		"pods", len(choice.pods), "domain", choice.plan.GangDomain, "tier", choice.plan.GangTier, "why", choice.plan.Explanation)
	return &fwk.GeneratePlacementsResult{Placements: []*fwk.Placement{{
		Name: preemptPrefix + choice.plan.GangDomain, Nodes: snap.nodeInfos(choice.plan.Ranks)}}}, nil
}

// terminatingOn says whether a terminating pod is on the node named.
func terminatingOn(nodes []fwk.NodeInfo, name string) bool {
	for _, ni := range nodes {
		if n := ni.Node(); n == nil || n.Name != name {
			continue
		}
		return slices.ContainsFunc(ni.GetPods(), func(pi fwk.PodInfo) bool { return pi.GetPod().DeletionTimestamp != nil })
	}
	return false
}

// podNames lists pods as namespace/name, at most 5 of them.
func podNames(pods []*corev1.Pod) string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return wording.Head(names, 5)
}

// withReason adds reason to st and returns it.
func withReason(st *fwk.Status, reason string) *fwk.Status {
	st.AppendReason(reason)
	return st
}
