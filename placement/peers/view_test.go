package peers

import (
	"slices"
	"strings"
	"sync"

	"github.com/fabricmap/fabricmap/placement"
)

// view is the read-only index of a fabric that every peer works from, built once per fabric (as each
// scheduler keeps its own topology cache).
type view struct {
	f     *placement.Fabric
	nodes []string
	// doms are the domains bottom up; members[i] the node indices below doms[i], in fabric order.
	doms     []placement.DomainInfo
	members  [][]int
	children [][]int
	byTier   map[int][]int
	tiers    []int // domain tiers, ascending
	bottom   []int // domains that hold nodes
	parentOf []int // -1 for the root
	// byName lists the node indices in name order.
	byName []int
}

var views sync.Map

// viewOf returns the cached view of f.
func viewOf(f *placement.Fabric) *view {
	if v, ok := views.Load(f); ok {
		return v.(*view)
	}
	v := &view{f: f, nodes: f.Nodes(), doms: f.Domains(), byTier: map[int][]int{}}
	idx := map[string]int{}
	for i, n := range v.nodes {
		idx[n] = i
	}
	byName := map[string]int{}
	v.members = make([][]int, len(v.doms))
	v.children = make([][]int, len(v.doms))
	v.parentOf = make([]int, len(v.doms))
	for i, d := range v.doms {
		byName[d.Name] = i
		for _, n := range d.Nodes {
			v.members[i] = append(v.members[i], idx[n])
		}
		for _, c := range d.Children {
			ci := byName[c]
			v.children[i] = append(v.children[i], ci)
			v.members[i] = append(v.members[i], v.members[ci]...)
			v.parentOf[ci] = i
		}
		if len(d.Nodes) > 0 {
			v.bottom = append(v.bottom, i)
		}
		if d.Parent == "" {
			v.parentOf[i] = -1
		}
		v.byTier[d.Tier] = append(v.byTier[d.Tier], i)
		if !slices.Contains(v.tiers, d.Tier) {
			v.tiers = append(v.tiers, d.Tier)
		}
	}
	slices.Sort(v.tiers)
	v.byName = make([]int, len(v.nodes))
	for i := range v.byName {
		v.byName[i] = i
	}
	slices.SortFunc(v.byName, func(a, b int) int { return strings.Compare(v.nodes[a], v.nodes[b]) })
	views.Store(f, v)
	return v
}

// sum is the free slots of domain d.
func (v *view) sum(slots []int, d int) int {
	s := 0
	for _, n := range v.members[d] {
		s += slots[n]
	}
	return s
}

// take appends up to need pods on the nodes in order, as many as each node's slots allow, and returns the
// ranks and what is still needed.
func take(ranks []string, v *view, slots []int, nodes []int, need int) ([]string, int) {
	for _, n := range nodes {
		k := min(slots[n], need)
		for range k {
			ranks = append(ranks, v.nodes[n])
		}
		slots[n] -= k
		need -= k
		if need == 0 {
			break
		}
	}
	return ranks, need
}

// errNoFit is every peer's answer when the gang does not fit.
type noFit struct{}

func (noFit) Error() string { return "does not fit" }

var errNoFit error = noFit{}
