package health

import (
	"cmp"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// treeIndex answers, in constant time, what the judges ask of the tree: a node's leaf domain, the domains that
// stand for a switch and a switch's tier.
type treeIndex struct {
	tree *topology.Tree
	// leaf maps each node in the tree to its leaf domain (leafDomains).
	leaf map[string]*topology.Domain
	// switchDomains maps each switch to the domains that list it, lowest tier first (a leaf with cascaded leaves
	// below it stands for its hosts' leaf and for the tier-2 domain above them).
	switchDomains map[string][]*topology.Domain
}

func newTreeIndex(t *topology.Tree) *treeIndex {
	if t == nil {
		t = topology.NewTree()
	}
	idx := &treeIndex{tree: t, leaf: leafDomains(t), switchDomains: map[string][]*topology.Domain{}}
	for _, d := range t.Domains {
		for _, s := range d.Switches {
			idx.switchDomains[s] = append(idx.switchDomains[s], d)
		}
	}
	for _, ds := range idx.switchDomains {
		slices.SortFunc(ds, func(a, b *topology.Domain) int {
			return cmp.Or(cmp.Compare(a.Tier, b.Tier), strings.Compare(a.Name, b.Name))
		})
	}
	return idx
}

// switchTier is the tier of the highest domain that stands for s; 0 when no domain does.
func (idx *treeIndex) switchTier(s string) int {
	if ds := idx.switchDomains[s]; len(ds) > 0 {
		return ds[len(ds)-1].Tier
	}
	return 0
}

// leafDomains maps each node of t to its leaf domain: the leaf-tier domain at or above the domain that holds
// it (an accelerator domain sits below its leaf); failing one, the closest domain with switches; failing
// that, the domain that holds it.
func leafDomains(t *topology.Tree) map[string]*topology.Domain {
	out := map[string]*topology.Domain{}
	for _, d := range t.Domains {
		if len(d.Nodes) == 0 {
			continue
		}
		leaf := leafAbove(t, d)
		for _, n := range d.Nodes {
			out[n] = leaf
		}
	}
	return out
}

func leafAbove(t *topology.Tree, d *topology.Domain) *topology.Domain {
	path := t.PathFrom(d.Name)
	if i := slices.IndexFunc(path, func(p *topology.Domain) bool { return p.TierName == topology.TierNameLeaf }); i >= 0 {
		return path[i]
	}
	if i := slices.IndexFunc(path, func(p *topology.Domain) bool { return len(p.Switches) > 0 }); i >= 0 {
		return path[i]
	}
	return d
}

// hasSwitch reports whether d stands for switch s (Domain.Switches is sorted).
func hasSwitch(d *topology.Domain, s string) bool {
	_, ok := slices.BinarySearch(d.Switches, s)
	return ok
}
