package aggregator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// keepNames gives the domains of tree, just built, the names they had in the previous tree this reconciler
// built (topology.KeepNames), so that a rail group whose leaf drops out of a capture, or that gains hosts,
// keeps its HyperNode and its nodes' labels; tree is kept for the next pass. The first tree after the
// aggregator starts (or after leadership moves) keeps the names of the HyperNodes fabricmap wrote before,
// read back with the switches each stands for (hypernodegen.SwitchesAnnotation): names survive restarts.
func (r *Reconciler) keepNames(tree *topology.Tree, existing []topologyv1alpha1.HyperNode, nodes map[string]*metav1.PartialObjectMetadata) {
	prev := r.previousTree
	if prev == nil && len(existing) > 0 {
		labels := make(map[string]map[string]string, len(nodes))
		for n, m := range nodes {
			labels[n] = m.Labels
		}
		prev, _ = treeread.ViewHyperNodes(existing, labels)
	}
	topology.KeepNames(tree, prev)
	r.previousTree = tree
}
