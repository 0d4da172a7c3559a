package placer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Snapshot is a cluster as placement sees it, read once per pass: the pods, the nodes, the topology's fabric
// and the live reservations. It is the one adapter from Kubernetes objects to placement's model; the placer
// and `fabricmap place` both build theirs with NewSnapshot (or ReadSnapshot) and Cluster.
type Snapshot struct {
	// AvoidDegraded keeps new pods off nodes whose compute link fabric health judged sick (labelled
	// wellknown.LinkHealthLabel=degraded or down): --avoid-degraded. NewSnapshot sets it; pods already
	// placed there stay.
	AvoidDegraded bool

	pods   []*corev1.Pod
	nodes  map[string]*corev1.Node
	fabric *placement.Fabric
	// inFabric holds the fabric's nodes.
	inFabric map[string]bool
	// reserved maps a node to its live reservation.
	reserved map[string]Reservation
	now      time.Time
	// stale is set while the placer places with its last consistent tree (the current one is inconsistent).
	stale *staleTree
}

// NewSnapshot builds the snapshot of a cluster from its topology tree, Nodes and Pods at time now, avoiding
// nodes with sick links (AvoidDegraded). A node reservation (ReservedTaint) is live while its gang has an
// unbound pod and its time is not up; the others are left for the placer to release.
func NewSnapshot(tree *topology.Tree, nodes []corev1.Node, pods []corev1.Pod, now time.Time) (*Snapshot, error) {
	f, err := compileTree(tree)
	if err != nil {
		return nil, err
	}
	return snapshotOn(f, nodes, pods, now), nil
}

// compileTree compiles the tree for placement; its errors (a node in two domains, a parent not above its
// child, …) are *placement.InputError.
func compileTree(tree *topology.Tree) (*placement.Fabric, error) {
	f, err := placement.NewFabric(tree)
	if err != nil {
		return nil, fmt.Errorf("the topology: %w", err)
	}
	return f, nil
}

// snapshotOn builds the snapshot on a compiled fabric. The fabric gives only the domain structure: which nodes
// exist, what they hold and whether they take pods comes from nodes and pods alone, so a fabric read earlier
// (the placer's last consistent tree) never puts a pod on a node that is gone (it has nothing allocatable) or
// that is cordoned, not Ready, tainted or reserved now (Unavailable).
func snapshotOn(f *placement.Fabric, nodes []corev1.Node, pods []corev1.Pod, now time.Time) *Snapshot {
	st := &Snapshot{nodes: make(map[string]*corev1.Node, len(nodes)), fabric: f, inFabric: map[string]bool{},
		reserved: map[string]Reservation{}, now: now, AvoidDegraded: true}
	for i := range pods {
		st.pods = append(st.pods, &pods[i])
	}
	for i := range nodes {
		st.nodes[nodes[i].Name] = &nodes[i]
	}
	for _, n := range f.Nodes() {
		st.inFabric[n] = true
	}
	for name, node := range st.nodes {
		if res, ok := reservationOf(node); ok && st.reservationDone(res) == "" {
			st.reserved[name] = res
		}
	}
	return st
}

// ReadSnapshot reads the pods, the nodes and the topology tree (ReadTree) and builds their snapshot. cache
// lists pods, nodes and HyperNodes; live reads the ClusterNetworkTopology.
func ReadSnapshot(ctx context.Context, cache, live client.Reader, now time.Time) (*Snapshot, error) {
	pods, nodes, err := listCluster(ctx, cache)
	if err != nil {
		return nil, err
	}
	tree, err := ReadTree(ctx, cache, live, nodes)
	if err != nil {
		return nil, err
	}
	return NewSnapshot(tree, nodes, pods, now)
}

// listCluster lists the pods and the nodes.
func listCluster(ctx context.Context, cache client.Reader) ([]corev1.Pod, []corev1.Node, error) {
	var pods corev1.PodList
	if err := cache.List(ctx, &pods); err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	var nodes corev1.NodeList
	if err := cache.List(ctx, &nodes); err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	return pods.Items, nodes.Items, nil
}

// Fabric is the topology the snapshot places on.
func (st *Snapshot) Fabric() *placement.Fabric { return st.fabric }

// reservationDone says why a reservation is over ("" while it is live): its gang is gone, has bound (every
// live pod has a node), or its time is up.
func (st *Snapshot) reservationDone(res Reservation) string {
	var pods []*corev1.Pod
	for _, p := range st.pods {
		if key, _ := GangOf(p); key != "" && key == res.Gang && p.DeletionTimestamp == nil && !finished(p) {
			pods = append(pods, p)
		}
	}
	switch {
	case res.Gang == "" || len(pods) == 0:
		return "the gang is gone"
	case !slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return p.Spec.NodeName == "" }):
		return "the gang is bound"
	case !st.now.Before(res.Until):
		return fmt.Sprintf("the reservation lapsed at %s", res.Until.UTC().Format("15:04:05Z"))
	}
	return ""
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
	v, ok := p.Annotations[wellknown.PlacementAnnotation]
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

// Cluster builds the placement snapshot for the gang keyed gang ("namespace/name"), whose pods carry
// tolerations: every node's allocatable, the requests of the pods bound or pinned to it (the gang's own pods
// aside), and the other gangs (in every form GangOf reads) as running gangs, preemptible as p allows
// (terminating pods count as used, but are no victims: they are leaving already). A node the gang cannot use
// (unschedulable, not Ready, reserved for another gang, a taint its pods do not tolerate, a sick link under
// AvoidDegraded) is placement.Node.Unavailable; a node of the topology without a Node has nothing allocatable.
// It returns the nodes outside the topology as well, which are not used.
func (st *Snapshot) Cluster(gang string, tolerations []corev1.Toleration, p Preemption) (*placement.Cluster, []string, error) {
	evictable := p.evictable(st.pods)
	used := st.used(gang)
	running := map[string]*placement.Running{}
	for _, p := range st.pods {
		n := targetNode(p)
		key, _ := GangOf(p)
		if n == "" || finished(p) || key == "" || key == gang || p.DeletionTimestamp != nil || st.nodes[n] == nil || !st.inFabric[n] {
			continue
		}
		req := podread.Request(p)
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
		nodes = append(nodes, placement.Node{Name: name, Allocatable: podread.ResourceList(node.Status.Allocatable), Used: used[name],
			Unavailable: !st.usable(node, gang, tolerations) || st.sickLink(node) != ""})
	}
	rs := make([]placement.Running, 0, len(running))
	for _, k := range slices.Sorted(maps.Keys(running)) {
		rs = append(rs, *running[k])
	}
	c, ignored, err := placement.NewCluster(st.fabric, nodes, rs)
	if err != nil {
		return nil, nil, fmt.Errorf("the placement snapshot: %w", err)
	}
	return c, ignored, nil
}

// used returns, per node, the requests of the pods bound or pinned to it that hold resources, the pods of
// gang aside.
func (st *Snapshot) used(gang string) map[string]placement.Resources {
	used := map[string]placement.Resources{}
	for _, p := range st.pods {
		n := targetNode(p)
		key, _ := GangOf(p)
		if n == "" || finished(p) || (key != "" && key == gang) {
			continue
		}
		u := used[n]
		if u == nil {
			u = placement.Resources{}
			used[n] = u
		}
		for k, q := range podread.Request(p) {
			u[k] += q
		}
	}
	return used
}

// usable says whether the pods of gang, carrying tolerations, may go to node: schedulable, Ready, not reserved
// for another gang, every NoSchedule or NoExecute taint tolerated.
func (st *Snapshot) usable(node *corev1.Node, gang string, tolerations []corev1.Toleration) bool {
	if node.Spec.Unschedulable || !ready(node) {
		return false
	}
	if r, ok := st.reserved[node.Name]; ok && r.Gang != gang {
		return false
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Key == wellknown.ReservedTaint || t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(logr.Discard(), t, false)
		}) {
			return false
		}
	}
	return true
}

// ready says whether a node may run pods: its Ready condition is True, or it reports none (a node read from a
// file, a Node created without a kubelet). A node the node lifecycle controller sees not Ready carries its
// NoSchedule taint as well; this holds without that controller.
func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

// placementGang turns a validated gang into placement's request. Its priority is the gang's lowest: placement
// preempts only gangs of strictly lower priority than that.
func (st *Snapshot) placementGang(g *GatedGang) (placement.Gang, error) {
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
