package peers

import (
	"slices"
	"sort"

	"github.com/fabricmap/fabricmap/placement"
)

// slurm follows Slurm's topology/tree plugin as documented: the job goes to the lowest-level switch that can
// hold it, best fit (the one with the fewest free resources that suffices); below it, leaf switches are
// chosen one at a time, the smallest that holds the rest when one does, else the largest; nodes within a leaf
// are taken in order. Intermediate switches are not considered, nor are PP groups.
type slurm struct{}

func (slurm) Name() string { return "slurm-tree" }

func (slurm) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	v := viewOf(c.Fabric())
	slots := c.Slots(g.Request)
	top := -1
	for _, t := range v.tiers {
		bestFree := 0
		for _, d := range v.byTier[t] {
			if free := v.sum(slots, d); free >= g.Pods && (top < 0 || free < bestFree) {
				top, bestFree = d, free
			}
		}
		if top >= 0 {
			break
		}
	}
	if top < 0 {
		return nil, errNoFit
	}
	type leaf struct{ dom, free int }
	var leaves []leaf
	for _, l := range v.bottom {
		if isBelow(v, l, top) {
			if f := v.sum(slots, l); f > 0 {
				leaves = append(leaves, leaf{l, f})
			}
		}
	}
	slices.SortStableFunc(leaves, func(a, b leaf) int { return b.free - a.free })
	var ranks []string
	need := g.Pods
	for next := 0; need > 0; next++ {
		if next == len(leaves) {
			return nil, errNoFit
		}
		rest := leaves[next:]
		// The smallest leaf that holds the rest, when one does; else the largest left.
		if k := sort.Search(len(rest), func(i int) bool { return rest[i].free < need }) - 1; k >= 0 {
			ranks, need = take(ranks, v, slots, v.members[rest[k].dom], need)
			break
		}
		ranks, need = take(ranks, v, slots, v.members[rest[0].dom], need)
	}
	if need > 0 {
		return nil, errNoFit
	}
	return ranks, nil
}

// isBelow reports whether domain d is top or lies below it.
func isBelow(v *view, d, top int) bool {
	for ; d >= 0; d = v.parentOf[d] {
		if d == top {
			return true
		}
	}
	return false
}
