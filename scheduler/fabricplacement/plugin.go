// Package fabricplacement is fabricmap's placement as kube-scheduler v1.36.3 plugins on the Workload API
// (scheduling.k8s.io/v1alpha2 PodGroups): a PlacementGenerate plugin that reads the topology tree from
// fabricmap's HyperNodes while any exist, else from the labels fabricmap writes on Nodes, and places the PodGroup's pods with package placement, as the placer and
// `fabricmap place` do, and a PlacementScore plugin that ranks the feasible placements by placement's ladder
// (lowest tier, pipeline groups kept low, fewest domains), its own plan first; as a Score plugin it puts each
// pod of the gang on the node the plan gives its rank (DP x PP groups contiguous, as the placer ranks them).
//
// A gang that fits nowhere on free capacity preempts whole lower-priority gangs, as the placer does: placement
// chooses the victims (GeneratePlacements, preempt.go), PostFilter nominates each pod's planned node, and
// Permit evicts every pod of the victims once the whole gang got that far (preemptpoints.go).
//
// A profile may have at most one PlacementGenerate plugin, so a profile with this one disables the in-tree
// TopologyPlacementGenerator at placementGenerate (config/fabricmap-scheduler.yaml).
package fabricplacement

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/podread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Name is the plugin's name in the scheduler's registry and in a profile's plugin lists.
const Name = "FabricmapPlacement"

// maxFallbacks caps the whole domains offered besides the plan (each costs the scheduler a run of the pods'
// filters over its nodes).
const maxFallbacks = 8

// planPrefix starts the name of the placement that is placement's own plan; fallback placements are named by
// their domain alone.
const planPrefix = "fabricmap-plan:"

// Plugin generates and scores placements of PodGroups on fabricmap's topology tree.
type Plugin struct {
	handle    fwk.Handle
	podGroups schedulinglisters.PodGroupLister
	trees     treeCache
	// keys tells the label keys the aggregator writes; nil (unit tests) detects them from the labels.
	keys *leaseKeys
	// evict evicts the victims of a preemption; nil (unit tests) evicts nothing.
	evict *evictor
	// preempting remembers what each gang evicted until it has left.
	preempting preemptions
}

var (
	_ fwk.PlacementGeneratePlugin = (*Plugin)(nil)
	_ fwk.PlacementScorePlugin    = (*Plugin)(nil)
)

// New builds the plugin; it takes no arguments. It watches the aggregator's Lease for the label keys it
// writes, and fabricmap's HyperNodes (the tree's source while any exists) once they are served, until ctx is
// done.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	podGroups := h.SharedInformerFactory().Scheduling().V1alpha2().PodGroups().Lister()
	return &Plugin{handle: h, podGroups: podGroups, keys: watchLeaseKeys(ctx, h.ClientSet()), evict: newEvictor(h, podGroups),
		trees: treeCache{hyperNodes: watchHyperNodes(ctx, h.KubeConfig())}}, nil
}

// Name returns Name.
func (pl *Plugin) Name() string { return Name }

// cycleKey is where GeneratePlacements leaves its snapshot and plan for ScorePlacement.
const cycleKey fwk.StateKey = Name + "/plan"

// cycleData is one PodGroup cycle's snapshot and plan, the node the plan gives each pod's rank, and the
// preemption the plan needs (nil: none).
type cycleData struct {
	snap     *snapshot
	plan     *placement.Plan
	rankNode map[types.UID]string
	preempt  *preemption
}

// Clone shares the data: it is never written after GeneratePlacements but for the preemption's counts, which
// hold their own lock.
func (d *cycleData) Clone() fwk.StateData { return d }

// GeneratePlacements places the PodGroup's unscheduled pods with package placement on the tree the parent
// placement's nodes are labelled with, and offers the plan's nodes first, then up to maxFallbacks whole domains
// from the plan's tier up to the gang's highest allowed tier that have room for it (in case the pods' filters,
// which placement does not run, refuse a node of the plan). Bad input (no labels, a tier that does not exist, a
// malformed gang) are an unschedulable status saying why; a gang that fits nowhere on free capacity may preempt
// whole lower-priority gangs (preemptPlacement), else gets an unschedulable status too.
func (pl *Plugin) GeneratePlacements(ctx context.Context, state fwk.PodGroupCycleState, podGroup fwk.PodGroupInfo, parent *fwk.Placement) (*fwk.GeneratePlacementsResult, *fwk.Status) {
	logger := klog.FromContext(ctx)
	pods := podGroup.GetUnscheduledPods()
	if len(pods) == 0 {
		return &fwk.GeneratePlacementsResult{Placements: []*fwk.Placement{parent}}, nil
	}
	if i := slices.IndexFunc(pods, heldByPlacer); i >= 0 {
		// The scheduler never queues a gated pod; should one reach us, the placer holds its gang: never both on one.
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: pod %s/%s is held by fabricmap-placer (scheduling gate %s): the placer places its gang",
			pods[i].Namespace, pods[i].Name, wellknown.Gate))
	}
	pg, err := pl.podGroups.PodGroups(podGroup.GetNamespace()).Get(podGroup.GetName())
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("reading PodGroup %s/%s: %w", podGroup.GetNamespace(), podGroup.GetName(), err))
	}
	if pods, err = podread.RankOrder(pods); err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: PodGroup %s/%s: %v", pg.Namespace, pg.Name, err))
	}
	var keys *hypernodegen.LabelKeys
	if k, ok := pl.keys.get(); ok {
		keys = &k
	}
	snap, err := newSnapshot(logger, &pl.trees, keys, parent.Nodes, pods[0])
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "fabricmap: "+err.Error())
	}
	gang, err := gangOf(pg, pods, snap.lt)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: PodGroup %s/%s: %v", pg.Namespace, pg.Name, err))
	}
	scheduled := pl.scheduledNodes(podGroup)
	if len(scheduled) > 0 {
		st, err := snap.keepWithin(gang, scheduled)
		if err != nil {
			return nil, fwk.AsStatus(fmt.Errorf("keeping PodGroup %s/%s beside its scheduled pods: %w", pg.Namespace, pg.Name, err))
		}
		if st != nil {
			return nil, st
		}
	}
	plan, err := snap.cluster.Place(gang)
	var inputErr *placement.InputError
	switch {
	case errors.As(err, &inputErr):
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("fabricmap: PodGroup %s/%s: %v", pg.Namespace, pg.Name, err))
	case errors.Is(err, placement.ErrNoPlacement):
		return pl.preemptPlacement(ctx, state, pg.Namespace+"/"+pg.Name, pods, snap, gang, parent.Nodes, len(scheduled) > 0,
			fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("fabricmap: no domain%s has room for %d pods of %v: %v",
				limitNote(snap.fabric, gang), gang.Pods, gang.Request, err)))
	case err != nil:
		return nil, fwk.AsStatus(fmt.Errorf("placing PodGroup %s/%s: %w", pg.Namespace, pg.Name, err))
	}
	state.Write(cycleKey, &cycleData{snap: snap, plan: plan, rankNode: rankNodes(pods, plan.Ranks)})
	out := []*fwk.Placement{{Name: planPrefix + plan.GangDomain, Nodes: snap.nodeInfos(plan.Ranks)}}
	for _, d := range snap.fallbacks(gang, plan.GangTier, maxFallbacks) {
		out = append(out, &fwk.Placement{Name: d.Name, Nodes: snap.nodeInfos(d.nodes)})
	}
	logger.V(4).Info("Placed PodGroup on fabricmap's tree", "podGroup", klog.KObj(pg), "domain", plan.GangDomain,
		"tier", plan.GangTier, "groupTier", plan.GroupTier, "ranks", plan.Ranks, "placements", len(out), "why", plan.Explanation)
	return &fwk.GeneratePlacementsResult{Placements: out}, nil
}

// limitNote names the gang's hard tier limit for a message: " up to tier N (name)", or "" without one.
func limitNote(f *placement.Fabric, g placement.Gang) string {
	switch {
	case g.HardTierName != "":
		return " up to tier " + g.HardTierName
	case g.HardTier > 0:
		return fmt.Sprintf(" up to tier %d (%s)", g.HardTier, f.TierName(g.HardTier))
	}
	return ""
}

// ScorePlacement ranks a feasible placement by placement's ladder: the plan of GeneratePlacements scores
// fwk.MaxScore; another scores less for each tier its pods span above the plan's and for each further bottom
// domain (NVLink domain or leaf) they use.
func (pl *Plugin) ScorePlacement(_ context.Context, state fwk.PodGroupCycleState, _ fwk.PodGroupInfo, a *fwk.PodGroupAssignments) (int64, *fwk.Status) {
	v, err := state.Read(cycleKey)
	if err != nil {
		return fwk.MinScore, nil // not a placement of ours: another generator's
	}
	d := v.(*cycleData)
	if a.Placement.Name == planPrefix+d.plan.GangDomain {
		return fwk.MaxScore, nil
	}
	var nodes []string
	for _, pa := range a.ProposedAssignments {
		if !slices.Contains(nodes, pa.GetNodeName()) {
			nodes = append(nodes, pa.GetNodeName())
		}
	}
	if len(nodes) == 0 {
		return fwk.MinScore, nil
	}
	tier, _, err := d.snap.fabric.Span(nodes)
	if err != nil {
		return fwk.MinScore, nil
	}
	bottoms := map[string]bool{}
	for _, n := range nodes {
		if ds := d.snap.fabric.NodeDomains(n); len(ds) > 0 {
			bottoms[ds[0]] = true
		}
	}
	score := fwk.MaxScore - 1 - 10*int64(max(0, tier-d.plan.GangTier)) - int64(len(bottoms)-1)
	return min(fwk.MaxScore-1, max(fwk.MinScore, score)), nil
}

// PlacementScoreExtensions returns nil: scores are already within [MinScore, MaxScore].
func (pl *Plugin) PlacementScoreExtensions() fwk.PlacementScoreExtensions { return nil }
