package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// Events about nodes that lose some of their switches.
const (
	// ReasonSwitchLost (Warning, on the Node): the node lost switches that are gone from the tree; the message
	// names them and since when. It is the Event of the node's health.KindSwitchLost finding.
	ReasonSwitchLost = "SwitchLost"
	// ReasonSwitchRestored (Normal, on the Node): the switches a node had lost are back in the tree.
	ReasonSwitchRestored = "SwitchRestored"
	// ReasonSwitchLossAcknowledged (Normal, on the Node): an admin removed the node's SwitchLostAnnotation; the
	// aggregator forgets the loss.
	ReasonSwitchLossAcknowledged = "SwitchLossAcknowledged"
	// ReasonSwitchesVanished (Warning, on the leader-election Lease): one pass found switches gone from the tree
	// while nodes they served stay placed; the message names the switches and counts the nodes left short.
	ReasonSwitchesVanished = "SwitchesVanished"
)

// switchLostValue is SwitchLostAnnotation's value.
type switchLostValue struct {
	Switches []health.GoneSwitch `json:"switches"`
	Since    time.Time           `json:"since"`
}

// SwitchLostValue is the value of SwitchLostAnnotation that states l (its node is the Node annotated).
func SwitchLostValue(l health.LostSwitch) string {
	b, err := json.Marshal(switchLostValue{Switches: l.Switches, Since: l.Since.UTC()})
	if err != nil { // strings and a time: cannot fail
		panic(fmt.Sprintf("encoding %s: %v", wellknown.SwitchLostAnnotation, err))
	}
	return string(b)
}

// ParseSwitchLost reads the value of SwitchLostAnnotation on node: its switches sorted by ID, each once.
func ParseSwitchLost(node, value string) (health.LostSwitch, error) {
	var v switchLostValue
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return health.LostSwitch{}, fmt.Errorf("annotation %s on node %s: %w", wellknown.SwitchLostAnnotation, node, err)
	}
	byID := map[string]health.GoneSwitch{}
	for _, s := range v.Switches {
		if s.ID != "" {
			byID[s.ID] = s
		}
	}
	if len(byID) == 0 || v.Since.IsZero() {
		return health.LostSwitch{}, fmt.Errorf("annotation %s on node %s: want {\"switches\": [{\"id\": …}, …], \"since\": …}, got %s",
			wellknown.SwitchLostAnnotation, node, topology.Printable(value))
	}
	l := health.LostSwitch{Node: node, Since: v.Since}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		l.Switches = append(l.Switches, byID[id])
	}
	return l, nil
}

// LostSwitchesFromNodes returns the lost switches the Nodes' SwitchLostAnnotation states (annotations: node →
// its annotations), sorted by node: what `fabricmap get health` judges beside the reports. Unlike a lost
// uplink, a node needs no report for it (a capture or UFM alone may place it). A value it cannot read is
// returned as an error, and that node left out.
func LostSwitchesFromNodes(annotations map[string]map[string]string) ([]health.LostSwitch, error) {
	var out []health.LostSwitch
	var errs []error
	for n, a := range annotations {
		v, ok := a[wellknown.SwitchLostAnnotation]
		if !ok {
			continue
		}
		l, err := ParseSwitchLost(n, v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b health.LostSwitch) int { return strings.Compare(a.Node, b.Node) })
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return out, errors.Join(errs...)
}
