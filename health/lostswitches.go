package health

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// GoneSwitch is a switch that vanished from the tree: its tree identifier (as topology evidence names it, e.g.
// "guid:0x…") and the name a source gave it, empty when none did.
type GoneSwitch struct {
	// ID is the switch's tree identifier.
	ID string `json:"id"`
	// Name is the switch's name as the evidence gave it (a capture's or UFM's description, an LLDP system
	// name); empty when unknown.
	Name string `json:"name,omitempty"`
}

// String names the switch for people: "name (id)", or the identifier alone.
func (g GoneSwitch) String() string {
	if g.Name == "" || g.Name == g.ID {
		return g.ID
	}
	return g.Name + " (" + g.ID + ")"
}

// LostSwitch is a node that the tree still places and that lost some of its switches: each of Switches was in
// the node's evidence in a pass and is gone from the whole tree in a later one (no source names it any more:
// a rail leaf that died, or left the capture or UFM), while the node kept its other links. From the node's
// side a link of its reaches nothing now: a rail-optimised job loses that rail on it. The aggregator knows it
// from one pass to the next (DetectLostSwitches) and states it on the Node (wellknown.SwitchLostAnnotation),
// where `fabricmap get health` reads it.
type LostSwitch struct {
	// Node is the Kubernetes node.
	Node string `json:"node"`
	// Switches are the switches it lost, sorted by ID.
	Switches []GoneSwitch `json:"switches"`
	// Since is when the aggregator first saw them gone.
	Since time.Time `json:"since"`
}

// SwitchIDs are the identifiers of l's switches, in its order.
func (l LostSwitch) SwitchIDs() []string {
	out := make([]string, 0, len(l.Switches))
	for _, s := range l.Switches {
		out = append(out, s.ID)
	}
	return out
}

// SwitchLostMessage is the message of a node's KindSwitchLost finding (and of the Event that records it).
func SwitchLostMessage(l LostSwitch) string {
	names := make([]string, 0, len(l.Switches))
	for _, s := range l.Switches {
		names = append(names, s.String())
	}
	what := "switch"
	if len(names) > 1 {
		what = fmt.Sprintf("%d switches", len(names))
	}
	return fmt.Sprintf("node %s lost %s %s: gone from the fabric since %s while the node stays placed; its links through %s reach nothing",
		l.Node, what, strings.Join(names, ", "), l.Since.UTC().Format(time.RFC3339), pronoun(len(names)))
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// judgeLostSwitches makes a critical KindSwitchLost finding of each node that lost some of its switches, in
// the node's leaf domain, and judges the node degraded. Critical, as a down compute link is: from the node's
// side a link of its leads nowhere, and a job placed by rails loses that rail on it. Degraded, not down: its
// other links still work (a node that lost every link is KindUplinkLost, down).
func judgeLostSwitches(r *report, idx *treeIndex, lost []LostSwitch) {
	for _, l := range lost {
		if l.Node == "" || len(l.Switches) == 0 {
			continue
		}
		f := Finding{Kind: KindSwitchLost, Severity: SeverityCritical, Node: l.Node, Switches: slices.Sorted(slices.Values(l.SwitchIDs())),
			Message: SwitchLostMessage(l)}
		if d, ok := idx.leaf[l.Node]; ok {
			f.Domain = d.Name
		}
		r.add(f)
		r.degrade(l.Node, nodeDegraded)
	}
}
