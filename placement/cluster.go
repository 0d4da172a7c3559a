package placement

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Node is one Kubernetes node's capacity.
type Node struct {
	// Name is the node's name in the fabric.
	Name string
	// Allocatable is what pods may use on the node.
	Allocatable Resources
	// Used is what is already requested on the node, the pods of running gangs included.
	Used Resources
	// Unavailable nodes take no new pod (cordoned, reserved for another gang, a sick link): the snapshot
	// counts them as full, while what runs there stays and still counts (a gang on it may be a victim).
	Unavailable bool
}

// Running is a gang that runs on the cluster: its pods per node, each with the same request.
type Running struct {
	// Name identifies the gang.
	Name string
	// Priority orders gangs for preemption: only lower-priority gangs are victims.
	Priority int32
	// Preemptible gangs may be evicted, whole, for a higher-priority gang.
	Preemptible bool
	// Pods maps a node to the number of the gang's pods on it.
	Pods map[string]int
	// Request is what each pod requests (already counted in the nodes' Used).
	Request Resources
	// Others is what the pods of the gang's other roles (a launcher beside its workers) use, per node, on
	// top of Pods x Request; evicting the gang frees it too, though Preempt counts only Pods x Request.
	Others map[string]Resources
	// GPUHours is the work the gang loses if it is evicted now (GPUs x hours run); ties between preemption
	// choices go to the one losing least.
	GPUHours float64
}

// Cluster is the in-memory snapshot placement works on: a Fabric, per-node resources in columns, and the
// running gangs. It is not safe for concurrent mutation.
type Cluster struct {
	fabric *Fabric
	// res maps a resource name to its column.
	res map[string]int
	// alloc[c][n] and used[c][n] are the allocatable and used quantity of column c on node n (fabric order).
	alloc, used [][]int64
	// maxAlloc[c] is the largest allocatable quantity of column c on any node (0: no node has it).
	maxAlloc []int64
	running  map[string]*Running
}

// NewCluster builds a snapshot. Nodes not in the fabric are returned as ignored (they have no place in the
// tree); fabric nodes without a Node have nothing allocatable; an Unavailable node is full whatever runs there,
// even once victims leave it. A running gang on an unknown node is an error.
func NewCluster(f *Fabric, nodes []Node, running []Running) (*Cluster, []string, error) {
	c := &Cluster{fabric: f, res: map[string]int{}, running: map[string]*Running{}}
	ignored, err := c.setNodes(nodes)
	if err != nil {
		return nil, nil, err
	}
	for i := range running {
		if err := c.AddRunning(running[i], false); err != nil {
			return nil, nil, err
		}
	}
	return c, ignored, nil
}

// WithNodes returns a copy of the cluster in which each of nodes replaces the capacity its node had, as
// NewCluster would set it (its Used counts what the running gangs' pods use there, as for NewCluster); c is
// not changed, so a cluster that readers share is updated by taking the copy. Nodes not in the fabric are
// returned as ignored. It costs a copy of the resource columns, not a pass over every node's resources: a
// caller that keeps a cluster between rounds applies only the nodes that changed.
func (c *Cluster) WithNodes(nodes []Node) (*Cluster, []string, error) {
	out := &Cluster{fabric: c.fabric, res: maps.Clone(c.res), alloc: make([][]int64, len(c.alloc)),
		used: make([][]int64, len(c.used)), maxAlloc: slices.Clone(c.maxAlloc), running: maps.Clone(c.running)}
	for col := range c.alloc {
		out.alloc[col], out.used[col] = slices.Clone(c.alloc[col]), slices.Clone(c.used[col])
	}
	for _, n := range nodes {
		if i, ok := c.fabric.nodeIdx[n.Name]; ok {
			for col := range out.alloc {
				out.alloc[col][i], out.used[col][i] = 0, 0
			}
		}
	}
	ignored, err := out.setNodes(nodes)
	if err != nil {
		return nil, nil, err
	}
	return out, ignored, nil
}

// setNodes adds each of nodes' allocatable and used quantities to the cluster's columns, then sets
// every column's largest allocatable quantity; it returns the nodes not in the fabric, sorted.
func (c *Cluster) setNodes(nodes []Node) ([]string, error) {
	var ignored []string
	for _, n := range nodes {
		i, ok := c.fabric.nodeIdx[n.Name]
		if !ok {
			ignored = append(ignored, n.Name)
			continue
		}
		for r, q := range n.Allocatable {
			if q < 0 {
				return nil, inputErr("nodes["+n.Name+"].allocatable["+r+"]", "negative quantity %d", q)
			}
			c.alloc[c.column(r)][i] = q
		}
		for r, q := range n.Used {
			c.used[c.column(r)][i] += q
		}
		if n.Unavailable {
			for r, q := range n.Allocatable {
				c.used[c.column(r)][i] += q
			}
		}
	}
	for col := range c.alloc {
		c.maxAlloc[col] = slices.Max(c.alloc[col])
	}
	slices.Sort(ignored)
	return ignored, nil
}

// column returns the column of resource r, adding an empty one when new.
func (c *Cluster) column(r string) int {
	if col, ok := c.res[r]; ok {
		return col
	}
	col := len(c.alloc)
	c.res[r] = col
	c.alloc = append(c.alloc, make([]int64, len(c.fabric.nodes)))
	c.used = append(c.used, make([]int64, len(c.fabric.nodes)))
	c.maxAlloc = append(c.maxAlloc, 0)
	return col
}

// Fabric returns the cluster's fabric.
func (c *Cluster) Fabric() *Fabric { return c.fabric }

// AddRunning records a running gang. With charge, its pods' requests are added to the nodes' used
// resources (a gang just placed); without, they are taken as already counted in Node.Used.
func (c *Cluster) AddRunning(r Running, charge bool) error {
	field := "running[" + r.Name + "]"
	if r.Name == "" {
		return inputErr("running[].name", "empty")
	}
	if _, dup := c.running[r.Name]; dup {
		return inputErr(field, "a gang of that name already runs")
	}
	for n, k := range r.Pods {
		i, ok := c.fabric.nodeIdx[n]
		if !ok {
			return inputErr(field+".pods["+n+"]", "node is not in the fabric")
		}
		if charge {
			for res, q := range r.Request {
				c.used[c.column(res)][i] += q * int64(k)
			}
		}
	}
	for n, use := range r.Others {
		i, ok := c.fabric.nodeIdx[n]
		if !ok {
			return inputErr(field+".others["+n+"]", "node is not in the fabric")
		}
		if charge {
			for res, q := range use {
				c.used[c.column(res)][i] += q
			}
		}
	}
	rr := r
	c.running[r.Name] = &rr
	return nil
}

// Remove ends a running gang and frees what its pods used.
func (c *Cluster) Remove(name string) error {
	r, ok := c.running[name]
	if !ok {
		return fmt.Errorf("gang %q is not running", name)
	}
	c.charge(r, -1)
	delete(c.running, name)
	return nil
}

// charge adds sign x the gang's usage to its nodes.
func (c *Cluster) charge(r *Running, sign int64) {
	for n, k := range r.Pods {
		i := c.fabric.nodeIdx[n]
		for res, q := range r.Request {
			c.used[c.column(res)][i] += sign * q * int64(k)
		}
	}
	for n, use := range r.Others {
		i := c.fabric.nodeIdx[n]
		for res, q := range use {
			c.used[c.column(res)][i] += sign * q
		}
	}
}

// Bind records plan's gang as running (its pods charged to the nodes), with the given priority,
// preemptibility and request; with roles, each pod is charged its own role's request (the main role's as
// Pods x Request, the others' as Others), the plan's ranks following the roles' order.
func (c *Cluster) Bind(p *Plan, g Gang) error {
	r := Running{Name: g.Name, Priority: g.Priority, Preemptible: g.Preemptible, Pods: map[string]int{}, Request: g.PodRequest()}
	if len(g.Roles) == 0 {
		for _, n := range p.Ranks {
			r.Pods[n]++
		}
		return c.AddRunning(r, true)
	}
	main, rank := g.MainRole(), 0
	r.Others = map[string]Resources{}
	for i, role := range g.Roles {
		for range role.Pods {
			if rank >= len(p.Ranks) {
				return inputErr("plan.ranks", "%d ranks, but gang %s's roles have more pods", len(p.Ranks), g.Name)
			}
			n := p.Ranks[rank]
			rank++
			if i == main {
				r.Pods[n]++
				continue
			}
			use := r.Others[n]
			if use == nil {
				use = Resources{}
				r.Others[n] = use
			}
			for k, q := range role.Request {
				use[k] += q
			}
		}
	}
	return c.AddRunning(r, true)
}

// Running returns the running gangs, sorted by name.
func (c *Cluster) Running() []Running {
	out := make([]Running, 0, len(c.running))
	for _, r := range c.running {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Running) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Free returns the free quantity of resource r on node.
func (c *Cluster) Free(node, r string) int64 {
	i, ok := c.fabric.nodeIdx[node]
	col, ok2 := c.res[r]
	if !ok || !ok2 {
		return 0
	}
	return c.alloc[col][i] - c.used[col][i]
}
