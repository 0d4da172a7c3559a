package aggregator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// lastTree is the tree this reconciler built before the one being built, whose names that one keeps and whose
// places tell which nodes lost their uplinks. The first tree after the aggregator starts (or after leadership
// moves) has none: the HyperNodes fabricmap wrote before stand for it, read back with the switches each stands
// for (wellknown.SwitchesAnnotation) and the nodes each holds. Nil when there is neither.
func (is *inferStage) lastTree(existing []topologyv1alpha1.HyperNode, nodes map[string]*metav1.PartialObjectMetadata) *topology.Tree {
	if is.previousTree != nil || len(existing) == 0 {
		return is.previousTree
	}
	labels := make(map[string]map[string]string, len(nodes))
	for n, m := range nodes {
		labels[n] = m.Labels
	}
	prev, _ := treeread.ViewHyperNodes(existing, labels)
	return prev
}

// keepNames gives the domains of tree, just built, the names they had in prev, the tree built before it
// (lastTree; topology.KeepNames), so that a rail group whose leaf drops out of a capture, or that gains hosts,
// keeps its HyperNode and its nodes' labels, and names survive restarts; tree is kept for the next pass. A
// name is kept only while the vote of tree's evidence does not reject it: the trust order (fabric-wide sources,
// then most of the nodes that report a switch) decides on every pass, so the first node to report a switch
// cannot name it for good. Each previous name the vote replaces is logged, with the name that replaces it.
func (is *inferStage) keepNames(tree, prev *topology.Tree) {
	for _, n := range topology.KeepNames(tree, prev) {
		is.r.Log.Info("a domain's previous name is not kept: the sources' vote rejects it",
			"domain", topology.Printable(n.Domain), "previous", topology.Printable(n.Previous))
	}
	is.previousTree = tree
}
