package hypernodegen

import "github.com/fabricmap/fabricmap/topology"

// DesiredNodeLabels returns the topology labels the aggregator wants on each node tree places, under keys:
// NodeLabels with the NVLink domain each node's evidence gives (evidence is the reports'), in its canonical
// spelling (topology.CanonicalNVLinkID), as the accelerator domains record it. It is the one
// computation of them: the aggregator's syncNodeLabels writes them (adding fabric health's label, and keeping or
// removing the labels of nodes the tree no longer places), and `fabricmap topology -o labels` prints them.
func DesiredNodeLabels(tree *topology.Tree, evidence []topology.NodeEvidence, keys LabelKeys) map[string]map[string]string {
	nvlink := map[string]string{}
	for _, e := range evidence {
		if id := topology.CanonicalNVLinkID(e.NVLinkDomain); id != "" {
			nvlink[e.Node] = id
		}
	}
	return NodeLabels(tree, nvlink, keys)
}

// NVLinkLeftOut returns how many nodes of evidence report an NVLink domain that tree leaves out because it has
// no accelerator domains (built without --accelerator-domains): then no output (labels, Kueue and KAI levels,
// HyperNodes) states NVLink, and the caller says how to turn it on. Zero when tree has accelerator domains.
func NVLinkLeftOut(tree *topology.Tree, evidence []topology.NodeEvidence) int {
	for _, d := range tree.Domains {
		if isAccelerator(d) {
			return 0
		}
	}
	n := 0
	for _, e := range evidence {
		if topology.CanonicalNVLinkID(e.NVLinkDomain) != "" {
			n++
		}
	}
	return n
}
