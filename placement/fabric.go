package placement

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/fabricmap/fabricmap/topology"
)

// ClusterDomain names the domain Fabric adds above a forest's roots, one tier above the highest.
const ClusterDomain = "cluster"

// Fabric is a compiled, immutable topology tree: domains and nodes by index, the nodes in depth-first order so
// that every domain's nodes form one contiguous range. Build it with NewFabric or one of the From functions.
type Fabric struct {
	domains []domain
	byName  map[string]int32
	// nodes are the node names in depth-first order (children by name, nodes by name).
	nodes   []string
	nodeIdx map[string]int32
	// nodeDom is the bottom domain of each node.
	nodeDom []int32
	// order lists domain indices children first (tier ascending), for bottom-up passes.
	order []int32
	root  int32
	// levels are the distinct tiers, ascending, starting with 0 for a node.
	levels []int
	// tierNames maps a tier to its name (the first name seen, by domain name order).
	tierNames map[int]string
	// anyDegraded is set when a domain has degraded uplinks.
	anyDegraded bool
}

// domain is one domain of a Fabric.
type domain struct {
	name     string
	tier     int
	tierName string
	parent   int32 // -1 for the root
	children []int32
	// lo and hi bound the domain's nodes in Fabric.nodes: [lo, hi).
	lo, hi int32
	// leaf is true when the domain holds nodes rather than domains.
	leaf bool
	// below is the number of domains in the subtree, the domain itself included.
	below int32
	// degraded is the number of the domain's uplinks judged degraded or down (topology.Domain.DegradedUplinks).
	degraded int32
}

// NewFabric compiles t. A node in two domains, a missing parent or child, a parent whose tier is not higher
// than its child's, a cycle, a domain that holds both domains and nodes, a negative count of degraded uplinks,
// or an empty tree is an error naming the domain; a forest gets a ClusterDomain root one tier above its highest
// root.
func NewFabric(t *topology.Tree) (*Fabric, error) {
	if t == nil || len(t.Domains) == 0 {
		return nil, inputErr("tree", "the topology tree has no domains")
	}
	nodeCount, err := checkTree(t)
	if err != nil {
		return nil, err
	}
	f := &Fabric{byName: make(map[string]int32, len(t.Domains)+1), nodeIdx: make(map[string]int32, nodeCount),
		tierNames: map[int]string{}, nodes: make([]string, 0, nodeCount), nodeDom: make([]int32, 0, nodeCount)}
	roots := t.Roots()
	top := int32(-1)
	if len(roots) > 1 {
		maxTier := 0
		for _, r := range roots {
			maxTier = max(maxTier, t.Domains[r].Tier)
		}
		name := ClusterDomain
		for t.Domains[name] != nil {
			name = "(" + name + ")"
		}
		top = f.addDomain(name, maxTier+1, ClusterDomain, -1)
		f.root = top
	}
	var walk func(name string, parent int32) (int32, error)
	walk = func(name string, parent int32) (int32, error) {
		d := t.Domains[name]
		i := f.addDomain(d.Name, d.Tier, d.TierName, parent)
		f.domains[i].lo = int32(len(f.nodes))
		f.domains[i].degraded = int32(d.DegradedUplinks)
		f.anyDegraded = f.anyDegraded || d.DegradedUplinks > 0
		if len(d.Nodes) > 0 {
			f.domains[i].leaf = true
			for _, n := range sortedCopy(d.Nodes) {
				f.nodeIdx[n] = int32(len(f.nodes))
				f.nodes = append(f.nodes, n)
				f.nodeDom = append(f.nodeDom, i)
			}
		}
		for _, c := range sortedCopy(d.Children) {
			ci, err := walk(c, i)
			if err != nil {
				return 0, err
			}
			f.domains[i].children = append(f.domains[i].children, ci)
		}
		f.domains[i].hi = int32(len(f.nodes))
		return i, nil
	}
	for _, r := range roots {
		ri, err := walk(r, top)
		if err != nil {
			return nil, err
		}
		if top >= 0 {
			f.domains[top].children = append(f.domains[top].children, ri)
		} else {
			f.root = ri
		}
	}
	if top >= 0 {
		f.domains[top].hi = int32(len(f.nodes))
	}
	if len(f.byName) != len(t.Domains)+int(btoi(top >= 0)) {
		return nil, inputErr("tree", "%d domains are not reachable from a root (a cycle?)", len(t.Domains)+int(btoi(top >= 0))-len(f.byName))
	}
	f.finish()
	return f, nil
}

// sortedCopy returns names sorted, copying only when they are not sorted already.
func sortedCopy(names []string) []string {
	if slices.IsSorted(names) {
		return names
	}
	return slices.Sorted(slices.Values(names))
}

// checkTree reports the first structural problem of t, naming the domain or node, and counts the nodes.
func checkTree(t *topology.Tree) (int, error) {
	n := 0
	for _, d := range t.Domains {
		n += len(d.Nodes)
	}
	seen := make(map[string]string, n)
	for _, name := range t.Names() {
		d := t.Domains[name]
		field := "tree.domains[" + name + "]"
		if d.Name != name {
			return 0, inputErr(field, "stored under another name (%q)", d.Name)
		}
		if d.Tier < 1 {
			return 0, inputErr(field+".tier", "tier %d is below 1", d.Tier)
		}
		if d.DegradedUplinks < 0 || d.DegradedUplinks > math.MaxInt32 {
			return 0, inputErr(field+".degradedUplinks", "%d is not a count of uplinks", d.DegradedUplinks)
		}
		if d.Parent != "" {
			p, ok := t.Domains[d.Parent]
			switch {
			case !ok:
				return 0, inputErr(field+".parent", "parent %q does not exist", d.Parent)
			case p.Tier <= d.Tier:
				return 0, inputErr(field+".parent", "parent %q has tier %d, not above %d", p.Name, p.Tier, d.Tier)
			case !slices.Contains(p.Children, name):
				return 0, inputErr(field+".parent", "parent %q does not list it as a child", p.Name)
			}
		}
		for _, c := range d.Children {
			if cd, ok := t.Domains[c]; !ok || cd.Parent != name {
				return 0, inputErr(field+".children", "child %q does not exist or names another parent", c)
			}
		}
		if len(d.Children) > 0 && len(d.Nodes) > 0 {
			return 0, inputErr(field, "holds both child domains and nodes")
		}
		for _, n := range d.Nodes {
			if other, dup := seen[n]; dup {
				return 0, inputErr("tree.nodes["+n+"]", "node is in two domains: %q and %q", other, name)
			}
			seen[n] = name
		}
	}
	return n, nil
}

func btoi(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// addDomain appends a domain and returns its index.
func (f *Fabric) addDomain(name string, tier int, tierName string, parent int32) int32 {
	i := int32(len(f.domains))
	f.domains = append(f.domains, domain{name: name, tier: tier, tierName: tierName, parent: parent})
	f.byName[name] = i
	return i
}

// finish fills the bottom-up order, the tier levels and the tier names.
func (f *Fabric) finish() {
	f.order = make([]int32, len(f.domains))
	for i := range f.order {
		f.order[i] = int32(i)
	}
	slices.SortStableFunc(f.order, func(a, b int32) int { return f.domains[a].tier - f.domains[b].tier })
	f.levels = []int{0}
	f.tierNames[0] = "node"
	for _, i := range f.order {
		d := &f.domains[i]
		d.below = 1
		for _, c := range d.children {
			d.below += f.domains[c].below
		}
		if d.tier != f.levels[len(f.levels)-1] {
			f.levels = append(f.levels, d.tier)
		}
		if _, ok := f.tierNames[d.tier]; !ok || (d.tierName != "" && f.tierNames[d.tier] == "") {
			f.tierNames[d.tier] = d.tierName
		}
	}
}

// Nodes returns the node names in depth-first order.
func (f *Fabric) Nodes() []string { return slices.Clone(f.nodes) }

// Tiers returns the tiers present, ascending, with 0 for a node.
func (f *Fabric) Tiers() []int { return slices.Clone(f.levels) }

// TierName returns the name of tier (node for 0; "tier<N>" when the tree gave none).
func (f *Fabric) TierName(tier int) string {
	if n := f.tierNames[tier]; n != "" {
		return n
	}
	return "tier" + strconv.Itoa(tier)
}

// TierByName resolves a tier given by name (leaf, spine, a Koordinator layer, …) or by number.
func (f *Fabric) TierByName(name string) (int, bool) {
	for _, l := range f.levels {
		if f.TierName(l) == name {
			return l, true
		}
	}
	if n, err := strconv.Atoi(name); err == nil && slices.Contains(f.levels, n) {
		return n, true
	}
	return 0, false
}

// NodeDomains returns the domains holding node, bottom up to the root; nil when the node is not in the fabric.
func (f *Fabric) NodeDomains(node string) []string {
	n, ok := f.nodeIdx[node]
	if !ok {
		return nil
	}
	var out []string
	for d := f.nodeDom[n]; d >= 0; d = f.domains[d].parent {
		out = append(out, f.domains[d].name)
	}
	return out
}

// lca returns the lowest domain holding nodes a and b (node indices), or -1 when a == b (the node itself).
func (f *Fabric) lca(a, b int32) int32 {
	if a == b {
		return -1
	}
	d := f.nodeDom[a]
	for !(f.domains[d].lo <= b && b < f.domains[d].hi) {
		d = f.domains[d].parent
	}
	return d
}

// Span returns the tier and name of the smallest domain holding every node named (tier 0 and the node's name
// for a single node). Unknown nodes are an error.
func (f *Fabric) Span(nodes []string) (int, string, error) {
	if len(nodes) == 0 {
		return 0, "", fmt.Errorf("no nodes")
	}
	idx := make([]int32, len(nodes))
	for i, n := range nodes {
		j, ok := f.nodeIdx[n]
		if !ok {
			return 0, "", fmt.Errorf("node %q is not in the fabric", n)
		}
		idx[i] = j
	}
	lo, hi := slices.Min(idx), slices.Max(idx)
	d := f.lca(lo, hi)
	if d < 0 {
		return 0, f.nodes[lo], nil
	}
	return f.domains[d].tier, f.domains[d].name, nil
}
