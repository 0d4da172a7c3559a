package fabricplacement

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1alpha2"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"
	topologylisters "volcano.sh/apis/pkg/client/listers/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// hnLeaves is the test fabric of HyperNodes: leaf → its nodes, every leaf under spine-1.
var hnLeaves = map[string][]string{"leaf-1": {"a1", "a2", "a3", "a4", "a5", "a6"}, "leaf-2": {"b1", "b2", "b3", "b4"}}

// fabricHyperNodes are the HyperNodes fabricmap's aggregator writes (hypernodegen.HyperNodes) for leaves under
// spine-1, their nodes selected as selector says.
func fabricHyperNodes(t *testing.T, leaves map[string][]string, selector string) []*topologyv1alpha1.HyperNode {
	t.Helper()
	tree := topology.NewTree()
	spine := &topology.Domain{Name: "spine-1", Tier: 2, TierName: topology.TierNameSpine}
	for _, l := range slices.Sorted(maps.Keys(leaves)) {
		spine.Children = append(spine.Children, l)
		if err := tree.Add(&topology.Domain{Name: l, Tier: 1, TierName: topology.TierNameLeaf, Parent: spine.Name, Nodes: leaves[l]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tree.Add(spine); err != nil {
		t.Fatal(err)
	}
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: selector, LabelKeys: keys})
	if err != nil {
		t.Fatalf("generating the HyperNodes: %v", err)
	}
	out := make([]*topologyv1alpha1.HyperNode, len(hns))
	for i := range hns {
		out[i] = &hns[i]
	}
	return out
}

// bareNode is an 8-GPU node with no topology label (labels: extra ones).
func bareNode(name string, extra map[string]string) *corev1.Node {
	n := testNode(name, "", "", nil)
	for _, k := range keys.All() {
		delete(n.Labels, k)
	}
	maps.Copy(n.Labels, extra)
	return n
}

// nodeInfos are the framework's NodeInfos of nodes.
func nodeInfos(nodes ...*corev1.Node) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		out = append(out, ni)
	}
	return out
}

// bareFabricNodes are the bare nodes of leaves (labels: extra labels by node), by name.
func bareFabricNodes(leaves map[string][]string, labels map[string]map[string]string) []*corev1.Node {
	var out []*corev1.Node
	for _, l := range slices.Sorted(maps.Keys(leaves)) {
		for _, n := range leaves[l] {
			out = append(out, bareNode(n, labels[n]))
		}
	}
	return out
}

// testHyperNodeWatch is a watch whose informer holds hns, listed already.
func testHyperNodeWatch(t *testing.T, hns []*topologyv1alpha1.HyperNode) (*hyperNodeWatch, cache.Indexer) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, hn := range hns {
		if err := indexer.Add(hn); err != nil {
			t.Fatal(err)
		}
	}
	w := &hyperNodeWatch{logger: klog.Background()}
	w.informer.Store(&hyperNodeInformer{lister: topologylisters.NewHyperNodeLister(indexer), synced: func() bool { return true }})
	return w, indexer
}

// TestTreeFromHyperNodes reads the tree from fabricmap's HyperNodes as treeread does (through the tree cache,
// as a cycle reads it), for nodes that carry no
// topology label: nodes named exactly, by regular expression or by label; a node the scheduler does not know
// left out; and a tree in transition (a member HyperNode not written yet, a node in two leaves) refused with the
// field that is wrong, so that no gang is placed on it.
func TestTreeFromHyperNodes(t *testing.T) {
	withLeafLabels := map[string]map[string]string{}
	for l, nodes := range hnLeaves {
		for _, n := range nodes {
			withLeafLabels[n] = map[string]string{keys.Tiers[0]: l}
		}
	}
	partial := func(t *testing.T) []*topologyv1alpha1.HyperNode { // leaf-2 not written yet
		return slices.DeleteFunc(fabricHyperNodes(t, hnLeaves, ""), func(hn *topologyv1alpha1.HyperNode) bool { return hn.Name == "leaf-2" })
	}
	moving := func(t *testing.T) []*topologyv1alpha1.HyperNode { // b1 written into leaf-1, not yet out of leaf-2
		old := fabricHyperNodes(t, hnLeaves, "")
		moved := map[string][]string{"leaf-1": append(slices.Clone(hnLeaves["leaf-1"]), "b1"), "leaf-2": hnLeaves["leaf-2"][1:]}
		for _, hn := range fabricHyperNodes(t, moved, "") {
			if hn.Name == "leaf-1" {
				old[slices.IndexFunc(old, func(o *topologyv1alpha1.HyperNode) bool { return o.Name == "leaf-1" })] = hn
			}
		}
		return old
	}
	for _, tc := range []struct {
		name   string
		hns    func(*testing.T) []*topologyv1alpha1.HyperNode
		labels map[string]map[string]string
		// drop are nodes the scheduler does not know.
		drop []string
		// want is each leaf's nodes; nil with err.
		want map[string][]string
		// allLabels is whether any node label may change the tree.
		allLabels bool
		err       string
	}{
		{name: "exact names", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode { return fabricHyperNodes(t, hnLeaves, "") }, want: hnLeaves},
		{name: "regular expressions", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode {
			return fabricHyperNodes(t, hnLeaves, hypernodegen.SelectorRegex)
		}, want: hnLeaves, allLabels: true},
		{name: "labels", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode {
			return fabricHyperNodes(t, hnLeaves, hypernodegen.SelectorLabel)
		}, labels: withLeafLabels, want: hnLeaves, allLabels: true},
		{name: "a node not registered yet is left out", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode { return fabricHyperNodes(t, hnLeaves, "") },
			drop: []string{"a6"}, want: map[string][]string{"leaf-1": hnLeaves["leaf-1"][:5], "leaf-2": hnLeaves["leaf-2"]}},
		{name: "partly written: a member HyperNode missing", hns: partial, err: `HyperNode "leaf-2" does not exist`},
		{name: "in transition: a node in two leaves", hns: moving, err: "b1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := slices.DeleteFunc(bareFabricNodes(hnLeaves, tc.labels), func(n *corev1.Node) bool { return slices.Contains(tc.drop, n.Name) })
			w, _ := testHyperNodeWatch(t, tc.hns(t))
			c := treeCache{hyperNodes: w}
			lt, _, _, err := c.get(nodeInfos(nodes...), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "HyperNodes") {
					t.Fatalf("error %v; want one about the HyperNodes containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, d := range lt.tree.Domains {
				if d.Tier == 1 {
					got[d.Name] = d.Nodes
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("leaves' nodes (-want +got):\n%s", diff)
			}
			wantKeys := map[string]int{keys.Tiers[0]: 1, keys.Tiers[1]: 2}
			if diff := cmp.Diff(wantKeys, lt.keyTier); diff != "" {
				t.Errorf("label key of each tier (-want +got):\n%s", diff)
			}
			if lt.source != sourceHyperNodes || lt.allLabels != tc.allLabels || !slices.Equal(lt.tiers(), []int{1, 2}) {
				t.Errorf("source %q, allLabels %v, tiers %v; want %q, %v, [1 2]", lt.source, lt.allLabels, lt.tiers(), sourceHyperNodes, tc.allLabels)
			}
		})
	}
}

// TestTreeCacheSource reads the tree from the nodes' labels while fabricmap owns no HyperNode, from the
// HyperNodes once they appear (the nodes' labels then ignored), again only when a HyperNode changes, and from
// the labels again once they are all gone.
func TestTreeCacheSource(t *testing.T) {
	labelled := nodeInfos(testNode("a1", "leaf-x", "spine-x", nil), testNode("b1", "leaf-y", "spine-x", nil))
	relabelled := nodeInfos(testNode("a1", "leaf-z", "spine-x", nil), testNode("b1", "leaf-y", "spine-x", nil))
	leaves := map[string][]string{"leaf-1": {"a1"}, "leaf-2": {"b1"}}
	w, indexer := testHyperNodeWatch(t, nil)
	c := treeCache{hyperNodes: w}
	var last *labelTree
	for _, step := range []struct {
		name   string
		change func()
		nodes  []fwk.NodeInfo
		source string
		read   bool
		leafA  string // the domain above node a1
	}{
		{name: "no HyperNode: labels", nodes: labelled, source: sourceLabels, read: true, leafA: "leaf-x"},
		{name: "unchanged", nodes: labelled, source: sourceLabels, leafA: "leaf-x"},
		{name: "HyperNodes written", change: func() {
			for _, hn := range fabricHyperNodes(t, leaves, "") {
				if err := indexer.Add(hn); err != nil {
					t.Fatal(err)
				}
				w.version.Add(1)
			}
		}, nodes: labelled, source: sourceHyperNodes, read: true, leafA: "leaf-1"},
		{name: "a node's labels change: HyperNodes still the tree", nodes: relabelled, source: sourceHyperNodes, leafA: "leaf-1"},
		{name: "a HyperNode changes", change: func() {
			for _, hn := range fabricHyperNodes(t, map[string][]string{"leaf-1": {"b1"}, "leaf-2": {"a1"}}, "") {
				if err := indexer.Update(hn); err != nil {
					t.Fatal(err)
				}
			}
			w.version.Add(1)
		}, nodes: relabelled, source: sourceHyperNodes, read: true, leafA: "leaf-2"},
		{name: "HyperNodes gone: labels", change: func() {
			for _, o := range indexer.List() {
				if err := indexer.Delete(o); err != nil {
					t.Fatal(err)
				}
				w.version.Add(1)
			}
		}, nodes: relabelled, source: sourceLabels, read: true, leafA: "leaf-z"},
	} {
		if step.change != nil {
			step.change()
		}
		lt, f, _, err := c.get(step.nodes, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if read := lt != last; read != step.read {
			t.Errorf("%s: tree read again %v; want %v", step.name, read, step.read)
		}
		if lt.source != step.source || c.source != step.source {
			t.Errorf("%s: source %q (logged %q); want %q", step.name, lt.source, c.source, step.source)
		}
		if got := f.NodeDomains("a1"); len(got) == 0 || got[0] != step.leafA {
			t.Errorf("%s: node a1's domains %v; want %s first", step.name, got, step.leafA)
		}
		last = lt
	}
}

// TestGeneratePlacementsHyperNodes places a gang of 4 whole-node pods on nodes without topology labels by
// fabricmap's HyperNodes, in the lowest and tightest leaf that holds it (leaf-2, 4 nodes, rather than leaf-1 of
// 6); with the HyperNodes partly written it offers no placement and says why.
func TestGeneratePlacementsHyperNodes(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(&schedulingv1alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}); err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, gpuPod("g", i))
	}
	for _, tc := range []struct {
		name string
		hns  func(*testing.T) []*topologyv1alpha1.HyperNode
		// want is the plan's nodes; nil: unschedulable with reason.
		want   []string
		reason string
	}{
		{name: "the tightest leaf", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode { return fabricHyperNodes(t, hnLeaves, "") },
			want: hnLeaves["leaf-2"]},
		{name: "partly written", hns: func(t *testing.T) []*topologyv1alpha1.HyperNode {
			return slices.DeleteFunc(fabricHyperNodes(t, hnLeaves, ""), func(hn *topologyv1alpha1.HyperNode) bool { return hn.Name == "leaf-1" })
		}, reason: `HyperNode "leaf-1" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := testHyperNodeWatch(t, tc.hns(t))
			pl := &Plugin{podGroups: schedulinglisters.NewPodGroupLister(indexer), trees: treeCache{hyperNodes: w}}
			parent := &fwk.Placement{Nodes: nodeInfos(bareFabricNodes(hnLeaves, nil)...)}
			res, st := pl.GeneratePlacements(context.Background(), framework.NewCycleState(), podGroupInfo{name: "g", pods: pods}, parent)
			if tc.want == nil {
				if st.IsSuccess() || st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), tc.reason) {
					t.Fatalf("status %v; want UnschedulableAndUnresolvable saying %q", st, tc.reason)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			var got []string
			for _, ni := range res.Placements[0].Nodes {
				got = append(got, ni.Node().Name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the plan's nodes (-want +got):\n%s", diff)
			}
		})
	}
}
