package aggregator

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/wellknown"
)

// labelWish is what a pass asks of the node labels, before their writer writes it: desired, each node's
// labels (the tree's topology labels, the held ones, fabric health's; an empty set for a node to clear), the
// annotations of the nodes that lost their uplinks or some of their switches, the keys fabricmap owns, and when
// the next held labels are due for removal (zero when none are held).
type labelWish struct {
	desired                map[string]map[string]string
	keys                   []string
	uplinkLost, switchLost map[string]string
	holdWait               time.Duration
}

// nodeLabelWish is the node labels' guard hook (their writer's plan): the guard and health stages' part of the
// node labels (nil when Config.NodeLabels is off). desired are the tree's topology labels of each placed node
// (hypernodegen.DesiredNodeLabels), to which it adds the dropped nodes. The nodes dropped for a silent agent lose the labels fabricmap owns at once (they are no
// longer in any domain); other nodes not in the tree (their uplinks lost, their report gone or unusable) keep
// them for Config.UnplacedLabelHold, then lose them (holdUnplacedLabels). A node that lost its uplinks carries
// UplinkLostAnnotation, one that lost some of its switches SwitchLostAnnotation, written with the labels and
// removed with the loss. placed are the nodes the tree places (placedNodes).
func (lw *nodeLabelWriter) nodeLabelWish(desired map[string]map[string]string, placed map[string]bool,
	dropped []string, nodes map[string]*metav1.PartialObjectMetadata) *labelWish {
	if !lw.r.Config.NodeLabels {
		return nil
	}
	for _, n := range dropped {
		if _, placed := desired[n]; !placed {
			desired[n] = map[string]string{}
		}
	}
	topologyKeys := lw.r.Config.LabelKeys.All()
	keys := append(slices.Clone(topologyKeys), wellknown.LinkHealthLabel)
	w := &labelWish{desired: desired, keys: keys}
	w.holdWait = lw.r.stageGuard().holdUnplacedLabels(desired, placed, dropped, nodes, topologyKeys) // labelhold.go
	lw.r.stageHealth().withLinkHealth(desired, nodes, keys)                                          // fabric health's label (healthpass.go)
	w.uplinkLost = lw.r.stageHealth().withUplinkLost(desired, nodes, keys)
	w.switchLost = lw.r.stageHealth().withSwitchLost(desired, nodes, keys) // lostswitches.go
	return w
}
