package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Events about nodes that lose their uplinks.
const (
	// ReasonUplinkLost (Warning, on the Node): the node lost all its uplink evidence; the message names the leaf
	// it was in and since when. It is the Event of the node's health.KindUplinkLost finding.
	ReasonUplinkLost = "UplinkLost"
	// ReasonUplinkRestored (Normal, on the Node): a node that had lost its uplinks is placed again.
	ReasonUplinkRestored = "UplinkRestored"
	// ReasonNodesLostUplinks (Warning, on the leader-election Lease): one pass found nodes that lost all their
	// uplink evidence; the message counts them and names the first of them and their leaves.
	ReasonNodesLostUplinks = "NodesLostUplinks"
)

// uplinkLostValue is UplinkLostAnnotation's value.
type uplinkLostValue struct {
	Leaf  string    `json:"leaf"`
	Since time.Time `json:"since"`
}

// UplinkLostValue is the value of UplinkLostAnnotation that states l (its node is the Node annotated).
func UplinkLostValue(l health.LostUplink) string {
	b, err := json.Marshal(uplinkLostValue{Leaf: l.Leaf, Since: l.Since.UTC()})
	if err != nil { // two strings and a time: cannot fail
		panic(fmt.Sprintf("encoding %s: %v", wellknown.UplinkLostAnnotation, err))
	}
	return string(b)
}

// ParseUplinkLost reads the value of UplinkLostAnnotation on node.
func ParseUplinkLost(node, value string) (health.LostUplink, error) {
	var v uplinkLostValue
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return health.LostUplink{}, fmt.Errorf("annotation %s on node %s: %w", wellknown.UplinkLostAnnotation, node, err)
	}
	if v.Leaf == "" || v.Since.IsZero() {
		return health.LostUplink{}, fmt.Errorf("annotation %s on node %s: want {\"leaf\": …, \"since\": …}, got %s", wellknown.UplinkLostAnnotation, node, topology.Printable(value))
	}
	return health.LostUplink{Node: node, Leaf: v.Leaf, Since: v.Since}, nil
}

// LostUplinksFromNodes returns the lost uplinks the Nodes' UplinkLostAnnotation states (annotations: node →
// its annotations), for the nodes that still have a report, sorted by node: what `fabricmap get health` judges
// beside the reports. A value it cannot read is returned as an error, and that node left out.
func LostUplinksFromNodes(annotations map[string]map[string]string, reports []*v1alpha1.NodeFabricReport) ([]health.LostUplink, error) {
	var out []health.LostUplink
	var errs []error
	for i := range reports {
		n := reports[i].Name
		v, ok := annotations[n][wellknown.UplinkLostAnnotation]
		if !ok {
			continue
		}
		l, err := ParseUplinkLost(n, v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b health.LostUplink) int { return strings.Compare(a.Node, b.Node) })
	return out, errors.Join(errs...)
}
