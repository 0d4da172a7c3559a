package wellknown

// Annotations the aggregator writes on Nodes.

// UplinkLostAnnotation is on a Node that lost all its uplink evidence (health.LostUplink): the tree placed it,
// and its report, still there, now names no switch that places it. Its value is JSON, {"leaf": the leaf domain
// the node was in, "since": when the aggregator first saw it without uplink evidence (RFC 3339)}. The aggregator
// writes it with the node labels (LabelFieldManager) and removes it when the node is placed again or its report
// goes; `fabricmap get health` reads it for its uplink-lost findings, and a new leader for the time it states.
const UplinkLostAnnotation = "fabricmap.io/uplink-lost"
