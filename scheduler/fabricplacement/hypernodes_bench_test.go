package fabricplacement

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	topologylisters "volcano.sh/apis/pkg/client/listers/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// BenchmarkGeneratePlacements10kHyperNodes is BenchmarkGeneratePlacements10k with the tree read from
// fabricmap's HyperNodes (16 spines x 20 leaves x 32 nodes, every node named exactly, 337 HyperNodes) and no
// topology label on the nodes: one PodGroup cycle with nothing changed since the cycle before.
func BenchmarkGeneratePlacements10kHyperNodes(b *testing.B) {
	tree := topology.NewTree()
	root := &topology.Domain{Name: "core", Tier: 3, TierName: topology.TierNameRoot}
	for s := range 16 {
		spine := &topology.Domain{Name: fmt.Sprintf("s%d", s), Tier: 2, TierName: topology.TierNameSpine, Parent: root.Name}
		root.Children = append(root.Children, spine.Name)
		for l := range 20 {
			leaf := &topology.Domain{Name: fmt.Sprintf("s%d-l%d", s, l), Tier: 1, TierName: topology.TierNameLeaf, Parent: spine.Name}
			spine.Children = append(spine.Children, leaf.Name)
			for n := range 32 {
				leaf.Nodes = append(leaf.Nodes, benchName(s, l, n))
			}
			if err := tree.Add(leaf); err != nil {
				b.Fatal(err)
			}
		}
		if err := tree.Add(spine); err != nil {
			b.Fatal(err)
		}
	}
	if err := tree.Add(root); err != nil {
		b.Fatal(err)
	}
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
	if err != nil {
		b.Fatal(err)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range hns {
		if err := indexer.Add(&hns[i]); err != nil {
			b.Fatal(err)
		}
	}
	w := &hyperNodeWatch{logger: klog.Background()}
	w.informer.Store(&hyperNodeInformer{lister: topologylisters.NewHyperNodeLister(indexer), synced: func() bool { return true }})
	pl := &Plugin{podGroups: benchPodGroups(b), trees: treeCache{hyperNodes: w}}
	infos := benchNodes(func(s, l, n int) *corev1.Node { return bareNode(benchName(s, l, n), nil) })
	measureCycles(b, pl, infos, func() {
		if pl.trees.lt.source != sourceHyperNodes {
			b.Fatalf("the tree was read from the %s; want the HyperNodes", pl.trees.lt.source)
		}
	}, nil)
}
