package wellknown

// Annotations the aggregator writes on Nodes.

// UplinkLostAnnotation is on a Node that lost all its uplink evidence (health.LostUplink): the tree placed it,
// and its report, still there, now names no switch that places it. Its value is JSON, {"leaf": the leaf domain
// the node was in, "since": when the aggregator first saw it without uplink evidence (RFC 3339)}. The aggregator
// writes it with the node labels (LabelFieldManager) and removes it when the node is placed again or its report
// goes; `fabricmap get health` reads it for its uplink-lost findings, and a new leader for the time it states.
const UplinkLostAnnotation = "fabricmap.io/uplink-lost"

// SwitchLostAnnotation is on a Node that the tree still places and that lost some of its switches
// (health.LostSwitch): switches its evidence named are gone from the whole tree. Its value is JSON,
// {"switches": [{"id": the switch's tree identifier, "name": the name the evidence gave it}, …], "since": when
// the aggregator first saw them gone (RFC 3339)}. The aggregator writes it with the node labels
// (LabelFieldManager) and removes it when the switches are back in the tree or the node is no longer placed; an
// admin who removed a switch on purpose acknowledges the loss by removing the annotation (`kubectl annotate node
// NODE fabricmap.io/switch-lost-`), after which the aggregator forgets it. `fabricmap get health` reads it for
// its switch-lost findings, and a new leader for the losses and the time it states.
const SwitchLostAnnotation = "fabricmap.io/switch-lost"

// NodeAnnotations are every annotation the aggregator writes on Nodes: the chart's admission policy lets the
// aggregator's account set and remove these, and no other (test/chart holds the two alike).
var NodeAnnotations = []string{UplinkLostAnnotation, SwitchLostAnnotation}
