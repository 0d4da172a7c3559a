package hypernodegen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// Tier is one tier of a tree as every output names it: the HyperNodes' spec.tier and tierName, the node
// label that carries a node's domain at that tier, and the Kueue Topology level of that label. `fabricmap get
// tiers` prints them, so that one table says what "tier 3", "tier-0" and a Kueue level mean in one cluster.
type Tier struct {
	// Tier is the HyperNodes' spec.tier (Volcano's highestTierAllowed counts in it): 1 is the closest.
	Tier int `json:"tier"`
	// Name is the tier's name (leaf, spine, accelerator, …; names joined by "/" when domains of one tier
	// have different names, as a leaf and a spine in different branches can).
	Name string `json:"name"`
	// Domains is how many domains (HyperNodes) the tier has.
	Domains int `json:"domains"`
	// LabelKey is the node-label key whose value is a node's domain at this tier; empty when none is written.
	LabelKey string `json:"labelKey,omitempty"`
	// KueueLevel is LabelKey's place among the Kueue Topology's levels, 1 for the top; 0 when not a level.
	KueueLevel int `json:"kueueLevel,omitempty"`
	// NVLinkParts counts, at the accelerator tier, the accelerator domains that hold only part of an NVLink
	// domain spanning leaves (topology.Domain.NVLinkPart).
	NVLinkParts int `json:"nvlinkParts,omitempty"`
}

// Tiers returns the tiers of tree from the top down, with the label keys of keys and the levels KueueTopology
// gives. A tree whose accelerator domains do not sit below every switch domain is an error, as for the labels.
func Tiers(tree *topology.Tree, keys LabelKeys) ([]Tier, error) {
	levels, err := treeLevels(keys, tree)
	if err != nil {
		return nil, err
	}
	shape, err := shapeOf(tree)
	if err != nil {
		return nil, err
	}
	byTier := map[int]*Tier{}
	names := map[int]map[string]bool{}
	for _, d := range tree.Domains {
		t := byTier[d.Tier]
		if t == nil {
			t = &Tier{Tier: d.Tier}
			byTier[d.Tier] = t
			names[d.Tier] = map[string]bool{}
		}
		t.Domains++
		names[d.Tier][d.TierName] = true
		if d.NVLinkPart {
			t.NVLinkParts++
		}
		switch {
		case d.TierName == topology.TierNameAccelerator:
			t.LabelKey = keys.Accelerator
		case d.TierName == topology.TierNameAcceleratorSubDomain:
			t.LabelKey = keys.AcceleratorSubDomain
		default:
			if i := d.Tier - shape.accelTier - 1; i >= 0 && i < len(keys.Tiers) {
				t.LabelKey = keys.Tiers[i]
			}
		}
	}
	out := make([]Tier, 0, len(byTier))
	for _, tier := range slices.Backward(slices.Sorted(maps.Keys(byTier))) {
		t := byTier[tier]
		t.Name = strings.Join(slices.Sorted(maps.Keys(names[tier])), "/")
		for i, l := range levels {
			if l.key == t.LabelKey && t.LabelKey != "" {
				t.KueueLevel = i + 1
			}
		}
		out = append(out, *t)
	}
	return out, nil
}

// TierRecipe says how to keep a job inside one domain of a tier, for each scheduler that reads fabricmap's
// outputs.
type TierRecipe struct {
	// Goal names the domain: "one leaf", "one NVLink domain", ….
	Goal string `json:"goal"`
	// Tier is the tier whose domain it is.
	Tier int `json:"tier"`
	// Volcano is what a Volcano Job's (or PodGroup's) spec.networkTopology says.
	Volcano string `json:"volcano"`
	// Kueue is the PodSet annotation Kueue's Topology Aware Scheduling reads; empty without a label key.
	Kueue string `json:"kueue,omitempty"`
	// PodGroup is the spec.schedulingConstraints a Kubernetes 1.36 PodGroup (scheduling.k8s.io/v1alpha2, read by
	// kube-scheduler's TopologyPlacement plugin) states to keep its pods in one domain of the tier: the tier's
	// node-label key as its one topology key. nil without a label key.
	PodGroup *PodGroupSchedulingConstraints `json:"podGroupSchedulingConstraints,omitempty"`
	// Note says what the recipe does not do.
	Note string `json:"note,omitempty"`
}

// PodGroupSchedulingConstraints is a Kubernetes 1.36 PodGroup's spec.schedulingConstraints
// (scheduling.k8s.io/v1alpha2), with the field names of that API: {topology: [{key: LABEL-KEY}]}.
type PodGroupSchedulingConstraints struct {
	// Topology holds the one topology constraint the API accepts.
	Topology []PodGroupTopologyConstraint `json:"topology"`
}

// PodGroupTopologyConstraint is one entry of spec.schedulingConstraints.topology: every pod of the PodGroup
// lands in one domain of the node label Key.
type PodGroupTopologyConstraint struct {
	// Key is the node-label key whose value names a node's domain.
	Key string `json:"key"`
}

// String writes the constraints as one line of YAML flow style: {topology: [{key: KEY}]}.
func (c PodGroupSchedulingConstraints) String() string {
	keys := make([]string, len(c.Topology))
	for i, t := range c.Topology {
		keys[i] = "{key: " + t.Key + "}"
	}
	return "{topology: [" + strings.Join(keys, ", ") + "]}"
}

// PodGroupAPIVersion is the API of the PodGroup kind kube-scheduler 1.36 gang-schedules and places by
// topology (the GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling feature gates).
const PodGroupAPIVersion = "scheduling.k8s.io/v1alpha2"

// KueueRequiredTopologyAnnotation is the PodSet (pod template) annotation through which a Kueue workload
// requires one domain of a Topology level.
const KueueRequiredTopologyAnnotation = "kueue.x-k8s.io/podset-required-topology"

// GoalLeaf is the Goal of the recipe that keeps a job inside one leaf.
const GoalLeaf = "one leaf"

// TierRecipes returns, for the tiers Tiers gives, how to keep a job inside one NVLink sub-domain, one NVLink
// domain, one leaf and one spine, each where the tree has such a tier: as Volcano's spec.networkTopology, as
// Kueue's PodSet annotation and as a Kubernetes 1.36 PodGroup's spec.schedulingConstraints.
func TierRecipes(tiers []Tier) []TierRecipe {
	goals := []struct{ tierName, goal string }{
		{topology.TierNameAcceleratorSubDomain, "one NVLink sub-domain (rack)"},
		{topology.TierNameAccelerator, "one NVLink domain"},
		{topology.TierNameLeaf, GoalLeaf},
		{topology.TierNameSpine, "one spine"},
	}
	var out []TierRecipe
	for _, g := range goals {
		i := slices.IndexFunc(tiers, func(t Tier) bool { return slices.Contains(strings.Split(t.Name, "/"), g.tierName) })
		if i < 0 {
			continue
		}
		t := tiers[i]
		r := TierRecipe{Goal: g.goal, Tier: t.Tier, Volcano: fmt.Sprintf("mode: hard, highestTierAllowed: %d", t.Tier)}
		if t.LabelKey != "" && t.KueueLevel > 0 {
			r.Kueue = KueueRequiredTopologyAnnotation + ": " + t.LabelKey
		}
		if t.LabelKey != "" {
			r.PodGroup = &PodGroupSchedulingConstraints{Topology: []PodGroupTopologyConstraint{{Key: t.LabelKey}}}
		}
		if t.NVLinkParts > 0 {
			r.Note = fmt.Sprintf("%d accelerator domains are parts of NVLink domains that span leaves: a job stays in the part behind one leaf", t.NVLinkParts)
		}
		out = append(out, r)
	}
	return out
}
