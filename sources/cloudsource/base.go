// Package cloudsource holds what the sources that read a cloud provider's topology API share (sources/aws,
// sources/gcp, sources/oci): the cluster's Nodes they join by spec.providerID (SortNodes, Scheme), their polling
// and retry settings with their flags and one rule for checking them (Poll, Retry), the bound on one poll, and
// their merge rule.
package cloudsource

import (
	"time"

	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// Base is embedded by every cloud source.
type Base struct {
	// Nodes lists the cluster's Nodes, with their spec.providerID; set by the source's Options or UseNodes.
	Nodes nodes.Lister
	// PollTimeout bounds one poll; zero: the poller's default.
	PollTimeout time.Duration
}

// Timeout returns PollTimeout, the bound on one poll.
func (b *Base) Timeout() time.Duration { return b.PollTimeout }

// UseNodes sets Nodes unless one is set already (sources.NodeReader).
func (b *Base) UseNodes(list nodes.Lister) {
	if b.Nodes == nil {
		b.Nodes = list
	}
}

// Merge is the cloud sources' merge rule, labels.MergeBelow: their pseudo-switches never share identifiers
// with real switches, so they place only the Nodes the reports, a capture and UFM do not, and add the layers
// above them.
func (b *Base) Merge(merged, in topology.Input) (topology.Input, []topology.Conflict) {
	return labels.MergeBelow(merged, in)
}
