package fabricplacement

import (
	"fmt"
	"sync"

	"github.com/fabricmap/fabricmap/hypernodegen"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/fabricmap/fabricmap/placement"
)

// treeCache keeps the tree and fabric across PodGroup cycles, read from fabricmap's HyperNodes while any
// exists (hyperNodes), else from the nodes' labels: they change only when a HyperNode changes, a node comes,
// goes or has a topology label changed, while reading them costs a pass over every label of every node. A node
// object the scheduler's cache still holds (the same pointer) has the same labels; one updated since (a status
// update, say) is compared on the labels the tree depends on (labelTree.labelsChanged).
type treeCache struct {
	mu sync.Mutex
	// hyperNodes watches fabricmap's HyperNodes; nil reads the labels alone.
	hyperNodes *hyperNodeWatch
	// hnState is hyperNodes' state when the tree was read.
	hnState hyperNodeState
	// source is the source of the last tree read, as logged when it changed.
	source string
	nodes  map[string]*corev1.Node
	lt     *labelTree
	fabric *placement.Fabric
	// fabricIndex is the fabric's domains and nodes, looked up by every cycle.
	fabricIndex
	// given is the encoded keys the tree was read with when they were given (hypernodegen.EncodeLabelKeys).
	given string
	// base is the cluster of the fabric's nodes as the pods do not matter, kept across cycles (basecluster.go).
	base baseCluster
}

// fabricIndex is a fabric's domains (children before parents) by order and by name, and each node's index in
// Fabric.Nodes order.
type fabricIndex struct {
	domains      []placement.DomainInfo
	domainByName map[string]*placement.DomainInfo
	nodeIndex    map[string]int
}

// indexFabric indexes f.
func indexFabric(f *placement.Fabric) fabricIndex {
	x := fabricIndex{domains: f.Domains(), domainByName: map[string]*placement.DomainInfo{}, nodeIndex: map[string]int{}}
	for i := range x.domains {
		x.domainByName[x.domains[i].Name] = &x.domains[i]
	}
	for i, n := range f.Nodes() {
		x.nodeIndex[n] = i
	}
	return x
}

// get returns the tree, fabric and its index of nodes, read with the keys given (nil: detected), read again
// only when a HyperNode fabricmap owns, the nodes, their topology labels or the keys given changed.
func (c *treeCache) get(nodes []fwk.NodeInfo, keys *hypernodegen.LabelKeys) (*labelTree, *placement.Fabric, fabricIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(nodes, keys)
}

// getLocked is get with c.mu held.
func (c *treeCache) getLocked(nodes []fwk.NodeInfo, keys *hypernodegen.LabelKeys) (*labelTree, *placement.Fabric, fabricIndex, error) {
	given := ""
	if keys != nil {
		given = hypernodegen.EncodeLabelKeys(*keys)
	}
	if c.lt != nil && c.given == given && c.hnState == c.hyperNodes.state() && c.fresh(nodes) {
		return c.lt, c.fabric, c.fabricIndex, nil
	}
	hnState, hns := c.hyperNodes.current()
	labels := make(map[string]map[string]string, len(nodes))
	seen := make(map[string]*corev1.Node, len(nodes))
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			labels[n.Name] = n.Labels
			seen[n.Name] = n
		}
	}
	c.nodes, c.lt, c.fabric = nil, nil, nil
	c.given, c.hnState = given, hnState
	var lt *labelTree
	var err error
	if len(hns) > 0 {
		c.logSource(sourceHyperNodes, len(hns))
		lt, err = treeFromHyperNodes(hns, labels, keys)
	} else {
		c.logSource(sourceLabels, 0)
		lt, err = treeFromLabels(labels, keys)
	}
	if err != nil {
		return nil, nil, fabricIndex{}, err
	}
	f, err := placement.NewFabric(lt.tree)
	if err != nil {
		return nil, nil, fabricIndex{}, fmt.Errorf("the tree read from the %s: %w", lt.source, err)
	}
	c.nodes, c.lt, c.fabric, c.fabricIndex = seen, lt, f, indexFabric(f)
	return lt, f, c.fabricIndex, nil
}

// fresh says whether nodes are the cached nodes with the same topology labels; it takes in the nodes whose
// objects changed but not their topology labels, so that the next check of them is a pointer's.
func (c *treeCache) fresh(nodes []fwk.NodeInfo) bool {
	count := 0
	var changed []*corev1.Node
	for _, ni := range nodes {
		n := ni.Node()
		if n == nil {
			continue
		}
		count++
		old, ok := c.nodes[n.Name]
		if !ok {
			return false
		}
		if old == n {
			continue
		}
		if c.lt.labelsChanged(old.Labels, n.Labels) {
			return false
		}
		changed = append(changed, n)
	}
	if count != len(c.nodes) {
		return false
	}
	for _, n := range changed {
		c.nodes[n.Name] = n
	}
	return true
}

// logSource logs the tree's source when it is not the last tree's: once at the first cycle, and again only
// when HyperNodes appear or all go.
func (c *treeCache) logSource(source string, hyperNodes int) {
	if source == c.source {
		return
	}
	c.source = source
	if source == sourceHyperNodes {
		c.hyperNodes.log().Info("Reading fabricmap's topology tree from its HyperNodes", "source", source, "hyperNodes", hyperNodes)
		return
	}
	c.hyperNodes.log().Info("Reading fabricmap's topology tree from the nodes' labels: no HyperNode owned by fabricmap is served", "source", source)
}
