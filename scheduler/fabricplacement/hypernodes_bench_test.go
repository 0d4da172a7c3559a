package fabricplacement

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	topologylisters "volcano.sh/apis/pkg/client/listers/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// BenchmarkGeneratePlacements10kHyperNodes is BenchmarkGeneratePlacements10k with the tree read from
// fabricmap's HyperNodes (16 spines x 20 leaves x 32 nodes, every node named exactly, 337 HyperNodes) and no
// topology label on the nodes: one PodGroup cycle with nothing changed since the cycle before.
func BenchmarkGeneratePlacements10kHyperNodes(b *testing.B) {
	tree := topology.NewTree()
	root := &topology.Domain{Name: "core", Tier: 3, TierName: topology.TierNameRoot}
	var infos []fwk.NodeInfo
	for s := range 16 {
		spine := &topology.Domain{Name: fmt.Sprintf("s%d", s), Tier: 2, TierName: topology.TierNameSpine, Parent: root.Name}
		root.Children = append(root.Children, spine.Name)
		for l := range 20 {
			leaf := &topology.Domain{Name: fmt.Sprintf("s%d-l%d", s, l), Tier: 1, TierName: topology.TierNameLeaf, Parent: spine.Name}
			spine.Children = append(spine.Children, leaf.Name)
			for n := range 32 {
				node := bareNode(fmt.Sprintf("s%d-l%d-n%d", s, l, n), nil)
				leaf.Nodes = append(leaf.Nodes, node.Name)
				var pods []*corev1.Pod
				if n%4 == 0 {
					busy := gpuPod("busy", s*1000+l*100+n)
					busy.Spec.NodeName = node.Name
					pods = append(pods, busy)
				}
				ni := framework.NewNodeInfo(pods...)
				ni.SetNode(node)
				infos = append(infos, ni)
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

	pgs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := pgs.Add(&schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g",
		Labels: map[string]string{wellknown.DPLabel: "8", wellknown.PPLabel: "8"}}}); err != nil {
		b.Fatal(err)
	}
	pl := &Plugin{podGroups: schedulinglisters.NewPodGroupLister(pgs), trees: treeCache{hyperNodes: w}}
	var pods []*corev1.Pod
	for i := range 64 {
		pods = append(pods, gpuPod("g", i))
	}
	info := podGroupInfo{name: "g", pods: pods}
	parent := &fwk.Placement{Nodes: infos}
	if _, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), info, parent); !st.IsSuccess() {
		b.Fatal(st.Message())
	}
	if pl.trees.lt.source != sourceHyperNodes {
		b.Fatalf("the tree was read from the %s; want the HyperNodes", pl.trees.lt.source)
	}
	b.ReportAllocs()
	cpu := processCPU(b)
	b.ResetTimer()
	for range b.N {
		if _, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), info, parent); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
