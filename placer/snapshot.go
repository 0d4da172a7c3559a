package placer

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/placement"
)

// state is what one pass reads from the cluster.
type state struct {
	pods   []*corev1.Pod
	nodes  map[string]*corev1.Node
	fabric *placement.Fabric
	// inFabric holds the fabric's nodes.
	inFabric map[string]bool
	// reserved maps a node to its live reservation.
	reserved map[string]Reservation
	now      time.Time
}

// Decision is the placement recorded on each pod of a placed gang (annotation fabricmap.io/placement).
type Decision struct {
	Gang        string `json:"gang"`
	Node        string `json:"node"`
	Rank        int    `json:"rank"`
	GangDomain  string `json:"gangDomain"`
	GangTier    int    `json:"gangTier"`
	GroupDomain string `json:"groupDomain,omitempty"`
	GroupTier   int    `json:"groupTier"`
	Explanation string `json:"explanation"`
	// Ranks is the whole plan (rank → node), on the rank-0 pod only: a placer that stops while pinning
	// resumes the same plan.
	Ranks []string `json:"ranks,omitempty"`
}

// decisionOf reads a pod's recorded decision; ok is false when it has none (or an unreadable one).
func decisionOf(p *corev1.Pod) (Decision, bool) {
	var d Decision
	v, ok := p.Annotations[PlacementAnnotation]
	if !ok || json.Unmarshal([]byte(v), &d) != nil || d.Node == "" {
		return Decision{}, false
	}
	return d, true
}

// finished says whether a pod no longer holds resources.
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// targetNode is the node a pod holds resources on: its bound node, or the node the placer pinned it to.
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if d, ok := decisionOf(p); ok {
		return d.Node
	}
	return ""
}

// cluster builds the placement snapshot for gang g: every node's allocatable, the requests of the pods bound
// or pinned to it (g's own pods aside), and the other gangs as running gangs, preemptible as evictable says
// (terminating pods count as used, but are no victims: they are leaving already). A node g cannot use
// (unschedulable, reserved for another gang, a taint g's pods do not tolerate) is made full.
func (st *state) cluster(g *Gang, evictable map[string]bool) (*placement.Cluster, error) {
	used := map[string]placement.Resources{}
	running := map[string]*placement.Running{}
	for _, p := range st.pods {
		n := targetNode(p)
		key, _ := GangOf(p)
		if n == "" || finished(p) || (key != "" && key == g.Key) {
			continue
		}
		req := PodRequest(p)
		u := used[n]
		if u == nil {
			u = placement.Resources{}
			used[n] = u
		}
		for k, q := range req {
			u[k] += q
		}
		if key == "" || p.DeletionTimestamp != nil || st.nodes[n] == nil || !st.inFabric[n] {
			continue
		}
		r := running[key]
		if r == nil {
			r = &placement.Running{Name: key, Pods: map[string]int{}, Request: req}
			running[key] = r
		}
		if p.Spec.Priority != nil {
			r.Priority = max(r.Priority, *p.Spec.Priority)
		}
		r.Preemptible = evictable[key]
		r.Pods[n]++
	}
	nodes := make([]placement.Node, 0, len(st.nodes))
	for _, name := range slices.Sorted(maps.Keys(st.nodes)) {
		node := st.nodes[name]
		pn := placement.Node{Name: name, Allocatable: ResourceList(node.Status.Allocatable), Used: used[name]}
		if !st.usable(node, g) {
			full := maps.Clone(pn.Allocatable)
			for k, q := range pn.Used {
				full[k] += q
			}
			pn.Used = full
		}
		nodes = append(nodes, pn)
	}
	rs := make([]placement.Running, 0, len(running))
	for _, k := range slices.Sorted(maps.Keys(running)) {
		rs = append(rs, *running[k])
	}
	c, _, err := placement.NewCluster(st.fabric, nodes, rs)
	return c, err
}

// usable says whether g's pods may go to node: schedulable, not reserved for another gang, every NoSchedule
// or NoExecute taint tolerated.
func (st *state) usable(node *corev1.Node, g *Gang) bool {
	if node.Spec.Unschedulable {
		return false
	}
	if r, ok := st.reserved[node.Name]; ok && r.Gang != g.Key {
		return false
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Key == ReservedTaint || t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(g.Pods[0].Spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(logr.Discard(), t, false)
		}) {
			return false
		}
	}
	return true
}

// placementGang turns a validated gang into placement's request. Its priority is the gang's lowest: placement
// preempts only gangs of strictly lower priority than that.
func (st *state) placementGang(g *Gang) (placement.Gang, error) {
	pg := placement.Gang{Name: g.Key, Pods: len(g.Pods), DP: g.DP, PP: g.PP, Request: g.Request, Roles: g.Roles,
		Priority: g.PreemptorPriority, Preemptible: g.Preemptible}
	t, err := hardTier(st.fabric, g.MustLayers)
	if err != nil {
		return pg, &FaultError{Gang: g.Key, Fault: err.Error()}
	}
	switch {
	case g.HardTierName != "" && t == 0 && g.HardTier == 0:
		pg.HardTierName = g.HardTierName
	case g.HardTier > 0 && (t == 0 || g.HardTier < t):
		pg.HardTier = g.HardTier
	default:
		pg.HardTier = t
	}
	return pg, nil
}
