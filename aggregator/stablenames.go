package aggregator

import (
	"github.com/fabricmap/fabricmap/topology"
)

// keepNames gives the domains of tree, just built, the names they had in the previous tree this reconciler
// built (topology.KeepNames), so that a rail group whose leaf drops out of a capture, or that gains hosts,
// keeps its HyperNode and its nodes' labels; tree is kept for the next pass. The first tree after the
// aggregator starts is named as built: the HyperNodes do not record the switches their domains stand for.
func (r *Reconciler) keepNames(tree *topology.Tree) {
	topology.KeepNames(tree, r.previousTree)
	r.previousTree = tree
}
