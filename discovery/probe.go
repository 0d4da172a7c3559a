// Package discovery defines the node-local probes that see the fabric around a node, and the registry
// through which the agent and the CLI find them. Each probe lives in its own sub-package, registers itself
// in init with its own settings and the flags that set them (Kind), and knows nothing of Kubernetes clients:
// it returns plain report fragments.
package discovery

import (
	"context"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Probe is one node-local source of fabric facts.
type Probe interface {
	// Name is the probe's registered name (e.g. "lldp"); it names the probe's condition in the report.
	Name() string
	// Run observes the node once. An error means the probe failed and its data must not be trusted this
	// cycle; a node with nothing for the probe to see is not an error but a Result with NotApplicable set.
	Run(ctx context.Context) (Result, error)
}

// Result is what one probe contributes to its node's report.
type Result struct {
	// GPUs are the node's GPUs.
	GPUs []v1alpha1.GPU
	// NVLinkDomain is "<clusterUUID>.<cliqueId>" when the node's GPUs share one multi-node NVLink domain.
	NVLinkDomain string
	// NVLinkSubDomain is the part of NVLinkDomain (a rack of a domain that spans racks) the node sits in, when known.
	NVLinkSubDomain string
	// RDMADevices are the node's RDMA devices.
	RDMADevices []v1alpha1.RDMADevice
	// Neighbors are the switch ports the node's links reach.
	Neighbors []v1alpha1.LinkNeighbor
	// Cloud is the node's cloud instance, as its provider's instance metadata service describes it.
	Cloud *v1alpha1.CloudInstance
	// NotApplicable, when non-empty, says why the node has nothing for this probe (no GPU, no driver, …).
	NotApplicable string
	// Warnings are problems that did not stop the probe (a missing sysfs file, a malformed frame, …); each
	// names what and where.
	Warnings []string
}

// Config holds what every probe may read: the inputs shared by several probes. A probe's own inputs are its
// Settings, registered with it (Kind).
type Config struct {
	// SysfsRoot is where sysfs is mounted ("/sys" on a real node; a fixture tree in tests).
	SysfsRoot string
	// NodeName is the Kubernetes name of the node being probed.
	NodeName string
}

// Starter is implemented by probes that collect in the background (an LLDP listener, say). The agent calls
// Start once, before its first cycle, with a context that ends when the agent stops; Run then returns what
// has been collected so far.
type Starter interface {
	Start(ctx context.Context) error
}

// Notifier is implemented by background probes that know when what they collected changed (an LLDP
// neighbour heard for the first time, say). The agent then runs a cycle soon instead of at its next interval.
type Notifier interface {
	// Changed receives a value after a change; changes not yet received fold into one value.
	Changed() <-chan struct{}
}
