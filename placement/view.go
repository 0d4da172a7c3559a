package placement

// DomainInfo is a read-only copy of one domain of a Fabric, for callers (simulators, other placers) that walk
// the tree themselves.
type DomainInfo struct {
	// Name, Tier and TierName are the domain's own (TierName as Fabric.TierName gives it).
	Name     string
	Tier     int
	TierName string
	// Parent is empty for the root.
	Parent string
	// Children are the child domains; Nodes the nodes directly in the domain (bottom domains only).
	Children []string
	Nodes    []string
	// DegradedUplinks is the number of the domain's uplinks judged degraded or down.
	DegradedUplinks int
}

// Domains returns every domain, children before parents (tier ascending), ties in depth-first order.
func (f *Fabric) Domains() []DomainInfo {
	out := make([]DomainInfo, 0, len(f.domains))
	for _, i := range f.order {
		d := &f.domains[i]
		di := DomainInfo{Name: d.name, Tier: d.tier, TierName: f.TierName(d.tier), DegradedUplinks: int(d.degraded)}
		if d.parent >= 0 {
			di.Parent = f.domains[d.parent].name
		}
		for _, c := range d.children {
			di.Children = append(di.Children, f.domains[c].name)
		}
		if d.leaf {
			di.Nodes = append(di.Nodes, f.nodes[d.lo:d.hi]...)
		}
		out = append(out, di)
	}
	return out
}

// Root returns the name of the fabric's top domain.
func (f *Fabric) Root() string { return f.domains[f.root].name }

// Slots returns, for every node in Fabric.Nodes order, how many pods of request fit on its free resources.
// A resource no node has gives zero slots everywhere.
func (c *Cluster) Slots(request Resources) []int {
	out := make([]int, len(c.fabric.nodes))
	var cols []int
	var qs []int64
	for r, q := range request {
		if q <= 0 {
			continue
		}
		col, ok := c.res[r]
		if !ok {
			return out
		}
		cols, qs = append(cols, col), append(qs, q)
	}
	if len(cols) == 0 {
		return out
	}
	for i := range out {
		best := int64(-1)
		for k, col := range cols {
			v := (c.alloc[col][i] - c.used[col][i]) / qs[k]
			if best < 0 || v < best {
				best = v
			}
		}
		out[i] = int(max(best, 0))
	}
	return out
}
