package placer

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Form says how a gang is declared.
type Form string

// The gang forms the placer recognises.
const (
	FormLabels      Form = "labels"
	FormPodGroup    Form = "podgroup"
	FormKoordinator Form = "koordinator"
	FormVolcano     Form = "volcano"
)

// GangOf returns the gang a pod belongs to ("namespace/name") and its form; "" when the pod is in no gang.
// The plain label wins over a PodGroup label, then Koordinator's annotation, then Volcano's. A pod a scheduler
// places as a gang itself (SchedulerPlaced) is in no gang of the placer's, whatever it carries.
func GangOf(p *corev1.Pod) (string, Form) {
	switch {
	case SchedulerPlaced(p):
		return "", ""
	case p.Labels[wellknown.GangLabel] != "":
		return p.Namespace + "/" + p.Labels[wellknown.GangLabel], FormLabels
	case p.Labels[wellknown.PodGroupLabel] != "":
		return p.Namespace + "/" + p.Labels[wellknown.PodGroupLabel], FormPodGroup
	case p.Labels[wellknown.PodGroupLabelLegacy] != "":
		return p.Namespace + "/" + p.Labels[wellknown.PodGroupLabelLegacy], FormPodGroup
	case p.Annotations[wellknown.KoordinatorGangName] != "":
		return p.Namespace + "/" + p.Annotations[wellknown.KoordinatorGangName], FormKoordinator
	case p.Annotations[wellknown.VolcanoGroupAnnotation] != "":
		return p.Namespace + "/" + p.Annotations[wellknown.VolcanoGroupAnnotation], FormVolcano
	}
	return "", ""
}

// SchedulerPlaced says whether a scheduler places the pod's gang itself, so that the placer must not: the pod is
// fabricmap-scheduler's (spec.schedulerName wellknown.SchedulerName), or it joins a Workload API PodGroup
// (spec.schedulingGroup), a gang the stock kube-scheduler 1.36 handles. The placer neither places nor pins nor
// ungates such a pod, nor evicts it as a gang; it counts only as resources in use.
func SchedulerPlaced(p *corev1.Pod) bool {
	return p.Spec.SchedulerName == wellknown.SchedulerName || p.Spec.SchedulingGroup != nil
}

// Gated says whether the pod still carries the placer's scheduling gate.
func Gated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == wellknown.Gate })
}

// preemptible says whether a pod agrees to its gang being evicted for a higher-priority gang; the gang is
// evictable only when all its pods agree (Preemption.evictable).
func preemptible(p *corev1.Pod) bool {
	return p.Labels[wellknown.PreemptibleLabel] == "true" || p.Labels[wellknown.KoordinatorPreemptibleLabel] == "true"
}

// podPriority is a pod's priority (0 when unset, as the API server's default priority class has it).
func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// GatedGang is a gated gang as read from its pods (and its PodGroup): what placement needs, and the pods in rank order.
type GatedGang struct {
	// Key is "namespace/name"; Namespace and Name its parts.
	Key, Namespace, Name string
	// Form is how the gang is declared.
	Form Form
	// Pods are the gang's pods, in rank order once Validate succeeded.
	Pods []*corev1.Pod
	// MinMember is how many pods the gang needs before it is placed.
	MinMember int
	// DP and PP are the parallel degrees (0: unset).
	DP, PP int
	// MustLayers are the layers (tier names) the gang must gather within (Koordinator's MustGather).
	MustLayers []string
	// HardTier and HardTierName cap the tier of the gang's domain (Volcano's networkTopology mode: hard).
	HardTier     int
	HardTierName string
	// Priority is the highest priority of its pods (it orders the gangs and describes the gang once it runs);
	// PreemptorPriority the lowest, which bounds whom the gang may preempt: only gangs of strictly lower
	// priority than every one of its pods.
	Priority, PreemptorPriority int32
	// Preemptible says whether it may be evicted once it runs: every pod carries the preemptible label.
	Preemptible bool
	// NeverPreempts is set when any pod has preemptionPolicy Never: the gang then evicts nobody.
	NeverPreempts bool
	// Request is what each pod requests, when they all request the same.
	Request placement.Resources
	// Roles, when pods request different resources (a launcher and its workers), group the pods with one
	// request each, in the order of their first rank; placement plans every pod with its own role's request,
	// the DP x PP groups being the largest role's (placement.Gang.MainRole).
	Roles []placement.Role
	// order lists, with roles, the pods' indices in Pods role by role (each role's in rank order): the order
	// of placement's ranks, which inRankOrder turns back.
	order []int
	// PodGroup is the gang's PodGroup object, when it has one.
	PodGroup *unstructured.Unstructured
	// Complete is when the gang's last pod was created.
	Complete time.Time
}

// FaultError is a gang that can never be placed as declared: pods disagreeing on DP or PP, a rank twice or
// missing, a minMember of 0. The gang stays gated and nothing is evicted for it.
type FaultError struct {
	// Gang is the gang's key; Fault says what is wrong.
	Gang, Fault string
}

// Error implements error.
func (e *FaultError) Error() string { return "gang " + e.Gang + ": " + e.Fault }

// newGang reads a gang's declaration from its pods (all of the same key) and PodGroup (nil when none). It
// checks only what the declaration says; Validate checks the pods against it.
func newGang(key string, form Form, pods []*corev1.Pod, pg *unstructured.Unstructured) (*GatedGang, error) {
	ns, name, _ := strings.Cut(key, "/")
	g := &GatedGang{Key: key, Namespace: ns, Name: name, Form: form, Pods: slices.Clone(pods), PodGroup: pg}
	fault := func(format string, args ...any) error {
		return &FaultError{Gang: key, Fault: fmt.Sprintf(format, args...)}
	}
	var err error
	if g.DP, err = agreeInt(pods, wellknown.DPLabel); err != nil {
		return nil, fault("%v", err)
	}
	if g.PP, err = agreeInt(pods, wellknown.PPLabel); err != nil {
		return nil, fault("%v", err)
	}
	g.Preemptible = len(pods) > 0
	for i, p := range pods {
		prio := podPriority(p)
		g.Priority = max(g.Priority, prio)
		if i == 0 || prio < g.PreemptorPriority {
			g.PreemptorPriority = prio
		}
		g.Preemptible = g.Preemptible && preemptible(p)
		g.NeverPreempts = g.NeverPreempts || (p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == corev1.PreemptNever)
		if p.CreationTimestamp.After(g.Complete) {
			g.Complete = p.CreationTimestamp.Time
		}
	}
	spec := ""
	switch form {
	case FormLabels:
		size, err := agreeInt(pods, wellknown.SizeLabel)
		if err != nil {
			return nil, fault("%v", err)
		}
		g.MinMember = size
		if size == 0 && g.DP > 0 && g.PP > 0 {
			g.MinMember = g.DP * g.PP
		}
		if g.MinMember == 0 {
			return nil, fault("no %s label and no %s and %s labels: the gang's size is unknown", wellknown.SizeLabel, wellknown.DPLabel, wellknown.PPLabel)
		}
	case FormVolcano:
		if err := g.readVolcano(pg); err != nil {
			return nil, fault("%v", err)
		}
	case FormPodGroup:
		if pg == nil {
			return nil, fault("its PodGroup %s does not exist", key)
		}
		mm, found, err := unstructured.NestedInt64(pg.Object, "spec", "minMember")
		if err != nil || !found || mm <= 0 {
			return nil, fault("PodGroup %s has minMember %d: it must be positive", key, mm)
		}
		g.MinMember = int(mm)
		spec = pg.GetAnnotations()[wellknown.KoordinatorTopology]
	case FormKoordinator:
		v, err := agreeString(pods, wellknown.KoordinatorMinAvailable, true)
		if err != nil {
			return nil, fault("%v", err)
		}
		if g.MinMember, err = strconv.Atoi(v); err != nil || g.MinMember <= 0 {
			return nil, fault("annotation %s=%q: want a positive number", wellknown.KoordinatorMinAvailable, v)
		}
	}
	if s, err := agreeString(pods, wellknown.KoordinatorTopology, true); err != nil {
		return nil, fault("%v", err)
	} else if s != "" {
		spec = s
	}
	if spec != "" {
		if g.MustLayers, err = ParseNetworkTopologySpec(spec); err != nil {
			return nil, fault("%v", err)
		}
	}
	if g.DP > 0 && g.PP > 0 && g.DP*g.PP > g.MinMember {
		return nil, fault("DP x PP = %d x %d = %d, but minMember is %d", g.DP, g.PP, g.DP*g.PP, g.MinMember)
	}
	return g, nil
}

// readVolcano reads a Volcano PodGroup: spec.minMember and spec.networkTopology (mode hard with
// highestTierAllowed or highestTierName caps the gang's tier; soft caps nothing).
func (g *GatedGang) readVolcano(pg *unstructured.Unstructured) error {
	if pg == nil {
		return fmt.Errorf("its Volcano PodGroup %s does not exist", g.Key)
	}
	mm, _, err := unstructured.NestedInt64(pg.Object, "spec", "minMember")
	if err != nil || mm <= 0 {
		return fmt.Errorf("PodGroup %s has minMember %d: it must be positive", g.Key, mm)
	}
	g.MinMember = int(mm)
	mode, _, _ := unstructured.NestedString(pg.Object, "spec", "networkTopology", "mode")
	switch mode {
	case "", "soft":
		return nil
	case "hard":
	default:
		return fmt.Errorf("PodGroup %s: networkTopology.mode %q: want hard or soft", g.Key, mode)
	}
	tier, _, err := unstructured.NestedInt64(pg.Object, "spec", "networkTopology", "highestTierAllowed")
	if err != nil {
		return fmt.Errorf("PodGroup %s: networkTopology.highestTierAllowed: %w", g.Key, err)
	}
	g.HardTier = int(tier)
	g.HardTierName, _, _ = unstructured.NestedString(pg.Object, "spec", "networkTopology", "highestTierName")
	if g.HardTier == 0 && g.HardTierName == "" {
		return fmt.Errorf("PodGroup %s: networkTopology mode hard without highestTierAllowed or highestTierName", g.Key)
	}
	return nil
}

// Validate checks a gang with at least MinMember pods: exactly MinMember pods, ranks 0 … M-1 each once (the
// rank label, else the Job completion index, else the pods' names with numbers compared as numbers:
// podread.RankOrder); it sorts Pods by rank and groups them into roles by request (readRoles).
func (g *GatedGang) Validate() error {
	fault := func(format string, args ...any) error {
		return &FaultError{Gang: g.Key, Fault: fmt.Sprintf(format, args...)}
	}
	if len(g.Pods) != g.MinMember {
		return fault("%d pods, but the gang has %d members", len(g.Pods), g.MinMember)
	}
	pods, err := podread.RankOrder(g.Pods)
	if err != nil {
		return fault("%s", err)
	}
	g.Pods = pods
	return g.readRoles()
}

// readRoles groups the pods (in rank order) by request: pods with identical requests form a role, roles in
// the order of their first rank, each named after its first pod. One request for all is no roles. DP x PP
// must be the number of pods, or with roles the largest role's.
func (g *GatedGang) readRoles() error {
	g.Request, g.Roles, g.order = nil, nil, nil
	var members [][]int
	for i, p := range g.Pods {
		req := podread.Request(p)
		j := slices.IndexFunc(g.Roles, func(r placement.Role) bool { return maps.Equal(r.Request, req) })
		if j < 0 {
			j = len(g.Roles)
			g.Roles = append(g.Roles, placement.Role{Name: p.Name, Request: req})
			members = append(members, nil)
		}
		g.Roles[j].Pods++
		members[j] = append(members[j], i)
	}
	if len(g.Roles) == 1 {
		g.Request, g.Roles = g.Roles[0].Request, nil
		if g.DP > 0 && g.PP > 0 && g.DP*g.PP != len(g.Pods) {
			return &FaultError{Gang: g.Key, Fault: fmt.Sprintf("DP x PP = %d x %d = %d, but minMember is %d", g.DP, g.PP, g.DP*g.PP, len(g.Pods))}
		}
		return nil
	}
	for _, m := range members {
		g.order = append(g.order, m...)
	}
	main := g.Roles[(&placement.Gang{Roles: g.Roles}).MainRole()]
	if g.DP > 0 && g.PP > 0 && g.DP*g.PP != main.Pods {
		return &FaultError{Gang: g.Key, Fault: fmt.Sprintf("DP x PP = %d x %d = %d, but the largest role (pods like %s) has %d pods",
			g.DP, g.PP, g.DP*g.PP, main.Name, main.Pods)}
	}
	return nil
}

// inRankOrder turns a plan of a gang with roles, whose ranks follow the roles (order), into the pods' rank
// order: Ranks[i], Roles[i] and GroupOf[i] then belong to Pods[i].
func (g *GatedGang) inRankOrder(p *placement.Plan) {
	if g.order == nil || len(p.Ranks) != len(g.order) {
		return
	}
	ranks, roles, groups := slices.Clone(p.Ranks), slices.Clone(p.Roles), slices.Clone(p.GroupOf)
	for i, pod := range g.order {
		p.Ranks[pod] = ranks[i]
		if i < len(roles) {
			p.Roles[pod] = roles[i]
		}
		if i < len(groups) {
			p.GroupOf[pod] = groups[i]
		}
	}
}

// agreeInt reads an integer label that every pod must give alike (or none); 0 when absent.
func agreeInt(pods []*corev1.Pod, key string) (int, error) {
	v, err := agreeString(pods, key, false)
	if err != nil || v == "" {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("label %s=%q: want a positive number", key, v)
	}
	return n, nil
}

// agreeString reads a label (or annotation) that the pods carry alike; pods without it are ignored.
func agreeString(pods []*corev1.Pod, key string, annotation bool) (string, error) {
	val, from := "", ""
	for _, p := range pods {
		m := p.Labels
		if annotation {
			m = p.Annotations
		}
		v, ok := m[key]
		if !ok {
			continue
		}
		if from != "" && v != val {
			return "", fmt.Errorf("pods %s and %s disagree on %s (%q, %q)", from, p.Name, key, val, v)
		}
		val, from = v, p.Name
	}
	return val, nil
}
