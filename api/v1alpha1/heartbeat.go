package v1alpha1

// An agent proves it is alive by renewing a coordination.k8s.io/v1 Lease in its own namespace, named after its
// node, every heartbeat interval, as the kubelet does with its node Lease. The report itself is written only
// when its content changes, so it says nothing about whether the agent still runs; the Lease does. The
// aggregator counts a report whose Lease stopped changing as expired.
const (
	// HeartbeatLeasePrefix starts the name of every agent heartbeat Lease; the node's name follows.
	HeartbeatLeasePrefix = "fabricmap-agent-"
	// HeartbeatLabel marks agent heartbeat Leases (value HeartbeatLabelValue), so the aggregator watches only them.
	HeartbeatLabel = "fabricmap.io/heartbeat"
	// HeartbeatLabelValue is the value of HeartbeatLabel on agent heartbeat Leases.
	HeartbeatLabelValue = "agent"
)

// HeartbeatLeaseName is the name of the heartbeat Lease of the agent on node.
func HeartbeatLeaseName(node string) string { return HeartbeatLeasePrefix + node }
