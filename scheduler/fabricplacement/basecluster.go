package fabricplacement

import (
	"fmt"
	"slices"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
)

// baseCluster is the cluster of every node of the cached fabric as the pods do not matter (nodeCapacity:
// allocatable, used, cordoned or a sick link), kept across PodGroup cycles. Building it costs a pass over every
// node's resources, while between two cycles only the nodes the last gang landed on, or that changed, differ:
// a cycle reads again only the nodes whose NodeInfo generation changed (the scheduler raises it whenever the
// node or its pods change) and applies them with placement.Cluster.WithNodes. The cluster and caps are
// replaced, never changed, so a cycle's snapshot may keep them.
type baseCluster struct {
	// fabric is the fabric the cluster is of; another one starts the cluster anew.
	fabric  *placement.Fabric
	cluster *placement.Cluster
	// caps[i] is fabric node i's capacity (Fabric.Nodes order) read at NodeInfo generation gens[i] (0: never).
	caps []placement.Node
	gens []int64
}

// cycleView is what one PodGroup cycle places on: the tree, the fabric and its index, the cluster of the nodes'
// capacities as the pods do not matter, each fabric node's capacity and NodeInfo (Fabric.Nodes order). It is
// shared with other cycles: read only.
type cycleView struct {
	lt      *labelTree
	fabric  *placement.Fabric
	cluster *placement.Cluster
	caps    []placement.Node
	infos   []fwk.NodeInfo
	fabricIndex
}

// view returns the cycleView of nodes, the tree read with the keys given (nil: detected): the tree and fabric
// as get keeps them, the cluster updated with the nodes whose generation changed since the last cycle.
func (c *treeCache) view(nodes []fwk.NodeInfo, keys *hypernodegen.LabelKeys) (*cycleView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lt, f, index, err := c.getLocked(nodes, keys)
	if err != nil {
		return nil, err
	}
	b := &c.base
	if b.fabric != f {
		empty, _, err := placement.NewCluster(f, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("building the cluster of the tree's %d nodes: %w", len(index.nodeIndex), err)
		}
		*b = baseCluster{fabric: f, cluster: empty, caps: make([]placement.Node, len(index.nodeIndex)), gens: make([]int64, len(index.nodeIndex))}
	}
	infos := make([]fwk.NodeInfo, len(b.caps))
	var changed []placement.Node
	for _, ni := range nodes {
		n := ni.Node()
		if n == nil {
			continue
		}
		i, ok := index.nodeIndex[n.Name]
		if !ok {
			continue // not in the tree (no topology labels)
		}
		infos[i] = ni
		if g := ni.GetGeneration(); g != b.gens[i] {
			if changed == nil { // the previous cycle's slices stay as they were
				b.caps, b.gens = slices.Clone(b.caps), slices.Clone(b.gens)
			}
			b.caps[i], b.gens[i] = nodeCapacity(ni), g
			changed = append(changed, b.caps[i])
		}
	}
	if len(changed) > 0 {
		cl, _, err := b.cluster.WithNodes(changed)
		if err != nil {
			b.fabric = nil // start anew next time rather than from a cluster that missed these nodes
			return nil, fmt.Errorf("applying %d changed nodes to the cluster: %w", len(changed), err)
		}
		b.cluster = cl
	}
	return &cycleView{lt: lt, fabric: f, cluster: b.cluster, caps: b.caps, infos: infos, fabricIndex: index}, nil
}
