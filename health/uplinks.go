package health

import (
	"fmt"
	"time"

	"github.com/fabricmap/fabricmap/topology"
)

// LostUplink is a node that lost all its uplink evidence: the tree placed it behind Leaf, and its report,
// still there, now names no switch that places it (a failed leaf switch, every cable of the node pulled, or
// an agent that no longer sees its neighbours). The aggregator knows it from one tree to the next and states
// it on the Node (wellknown.UplinkLostAnnotation), where `fabricmap get health` reads it.
type LostUplink struct {
	// Node is the Kubernetes node.
	Node string `json:"node"`
	// Leaf is the leaf domain the node was in before it lost its uplinks (as NodeLeaves names it).
	Leaf string `json:"leaf"`
	// Since is when the aggregator first saw the node without uplink evidence.
	Since time.Time `json:"since"`
}

// UplinkLostMessage is the message of a node's KindUplinkLost finding (and of the Event that records it).
func UplinkLostMessage(l LostUplink) string {
	return fmt.Sprintf("node %s lost its leaf %s: no uplink evidence since %s", l.Node, l.Leaf, l.Since.UTC().Format(time.RFC3339))
}

// judgeLostUplinks makes a critical KindUplinkLost finding of each node that lost its uplinks, in the domain of
// the leaf it lost, and judges the node down: no compute link of its is known to work.
func judgeLostUplinks(r *report, lost []LostUplink) {
	for _, l := range lost {
		if l.Node == "" {
			continue
		}
		r.add(Finding{Kind: KindUplinkLost, Severity: SeverityCritical, Node: l.Node, Domain: l.Leaf, Message: UplinkLostMessage(l)})
		r.degrade(l.Node, nodeDown)
	}
}

// NodeLeaves maps each node of t to the name of its leaf domain, as the findings name it: the leaf-tier domain
// at or above the domain that holds it (an accelerator domain sits below its leaf); failing one, the closest
// domain with switches; failing that, the domain that holds it. A nil tree places no node.
func NodeLeaves(t *topology.Tree) map[string]string {
	if t == nil {
		return map[string]string{}
	}
	leaves := leafDomains(t)
	out := make(map[string]string, len(leaves))
	for n, d := range leaves {
		out[n] = d.Name
	}
	return out
}
