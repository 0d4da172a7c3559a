package wellknown

// Server-side apply field managers and the report's annotation: who owns which fields.

// AggregatorFieldManager is the server-side apply field manager of the aggregator.
const AggregatorFieldManager = "fabricmap-aggregator"

// LabelFieldManager is the field manager of the node labels the aggregator writes. Server-side apply under
// its own manager means that a key fabricmap stops writing is removed only where fabricmap owns it: a label
// an admin set by hand is never taken away, and one set under a key fabricmap writes is never overwritten
// (syncNodeLabels reads the owners from the Nodes' managed fields, which the manager's cache must keep).
const LabelFieldManager = "fabricmap-aggregator-labels"

// AgentFieldManager is the server-side apply field manager of the agent.
const AgentFieldManager = "fabricmap-agent"

// ContentHashAnnotation holds the hash of the report's content (spec and probe states), for humans and tools;
// the agent itself compares against the content it reads back, so a hand-edited report is corrected.
const ContentHashAnnotation = "fabricmap.io/content-hash"
