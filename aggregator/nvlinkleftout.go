package aggregator

import (
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
)

// nvlinkLeftOut is the number of nodes whose reported NVLink domain the tree leaves out, as last said.
type nvlinkLeftOut int

// noteNVLinkLeftOut says, in one Warn line each time the count becomes non-zero or changes, how many nodes
// report an NVLink domain that tree leaves out because the aggregator runs without --accelerator-domains
// (hypernodegen.NVLinkLeftOut): no output then states NVLink (no node label, no Kueue, KAI or Koordinator
// level, no HyperNode), so no scheduler can keep a job inside one NVLink domain. The line names the flag and the
// chart value that turn them on. With the flag on it says nothing: a tree that still has no accelerator domain
// (no leaf where most nodes report one) names the nodes it leaves out among the tree's problems. evidence is
// the reports', where NVLink domains come from.
func (h *healthStage) noteNVLinkLeftOut(tree *topology.Tree, evidence []topology.NodeEvidence) {
	n := nvlinkLeftOut(0)
	if !h.r.Config.AcceleratorDomains {
		n = nvlinkLeftOut(hypernodegen.NVLinkLeftOut(tree, evidence))
	}
	if n == h.nvlinkLeftOut {
		return
	}
	h.nvlinkLeftOut = n
	if n == 0 {
		return
	}
	h.r.Log.Warn("nodes report NVLink domains that no output states: without --accelerator-domains the tree has no NVLink level, "+
		"so no node label, Kueue, KAI or Koordinator level or HyperNode names them; turn it on with --accelerator-domains "+
		"(the chart's aggregator.acceleratorDomains)", "nodes", int(n))
}
