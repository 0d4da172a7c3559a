package test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/fabrictest"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
)

// hnPool is the pool of hnFabric's nodes.
const hnPool = "hypernodes"

// hnFabric is the fabric TestHyperNodes describes with HyperNodes alone: hn-leaf-1 (6 nodes) and hn-leaf-2 (4)
// under hn-spine-1, hn-leaf-3 (2) under hn-spine-2. A gang of 4 fits either leaf of hn-spine-1; the tightest
// is hn-leaf-2.
var hnFabric = []fabrictest.Leaf{
	{Pool: hnPool, Spine: "hn-spine-1", Name: "hn-leaf-1", Nodes: 6},
	{Pool: hnPool, Spine: "hn-spine-1", Name: "hn-leaf-2", Nodes: 4},
	{Pool: hnPool, Spine: "hn-spine-2", Name: "hn-leaf-3", Nodes: 2},
}

// TestHyperNodes runs fabricmap-scheduler on nodes that carry none of fabricmap's topology labels (a cluster
// with aggregator.nodeLabels.enabled off) while the HyperNodes fabricmap's aggregator writes for their fabric
// exist: the plugin reads the tree from the HyperNodes, and a PodGroup of 4 x 8 GPUs whose topology key is the
// spine's lands in the lowest and tightest leaf that holds it, as it does on the labels (TestFabricmapScheduler).
// The HyperNodes are deleted when the test ends, so that the package's other tests read the labels again.
func TestHyperNodes(t *testing.T) {
	testenv.Require(t)
	ctx := t.Context()
	c := testenv.Shared.Client
	tree, problems := topology.Build(fabrictest.Input(hnFabric), topology.BuildOptions{RootName: topology.TierNameRoot, AcceleratorDomains: true})
	if len(problems) > 0 {
		t.Fatalf("inferring the test fabric: %v", problems)
	}
	tiers, err := hypernodegen.Tiers(tree, hypernodegen.DefaultLabelKeys()) // the label keys only: the nodes get none
	if err != nil {
		t.Fatalf("the tiers of the test fabric: %v", err)
	}
	i := slices.IndexFunc(tiers, func(tr hypernodegen.Tier) bool { return tr.Name == topology.TierNameSpine && tr.LabelKey != "" })
	if i < 0 {
		t.Fatalf("no labelled spine tier among %+v", tiers)
	}
	spineKey := tiers[i].LabelKey
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
	if err != nil {
		t.Fatalf("the HyperNodes of the test fabric: %v", err)
	}
	for i := range hns {
		hn := &hns[i]
		if err := c.Create(ctx, hn); err != nil {
			t.Fatalf("creating HyperNode %s: %v", hn.Name, err)
		}
	}
	t.Cleanup(func() { // the test's context is done by now
		ctx := context.Background()
		if err := c.DeleteAllOf(ctx, &topologyv1alpha1.HyperNode{}, client.MatchingLabels(hypernodegen.OwnedSelector())); err != nil {
			t.Errorf("deleting the test's HyperNodes: %v", err)
		}
		testenv.Eventually(t, 30*time.Second, "the test's HyperNodes gone", func() (bool, string) {
			var list topologyv1alpha1.HyperNodeList
			if err := c.List(ctx, &list); err != nil {
				return false, err.Error()
			}
			return len(list.Items) == 0, "HyperNodes left"
		})
	})
	fabrictest.CreateNodes(t, ctx, c, hnFabric, nil)
	startScheduler(t)

	g := gang{name: "hn-lowest", pods: 4, key: spineKey}
	ns := "fs-" + g.name
	g.submit(t, ctx, ns, hnPool)
	nodes := waitBound(t, ctx, ns, g)
	leaves := map[string]int{}
	for _, n := range nodes {
		path := tree.PathOf(n)
		if len(path) == 0 {
			t.Fatalf("node %s is in no domain of the tree", n)
		}
		leaves[path[0].Name]++ // the lowest domain first
	}
	if diff := cmp.Diff(map[string]int{"hn-leaf-2": 4}, leaves); diff != "" {
		t.Errorf("gang bound to %v: pods per leaf (-want +got):\n%s", nodes, diff)
	}
	t.Logf("bound to %v", nodes)
}
