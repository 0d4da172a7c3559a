package cloudlayers

import (
	"fmt"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// The keys under which Google Cloud's evidence gives each placed node its physicalHostTopology, top first, as
// labels of the synthetic nodes handed to labels.EvidenceAs. They name the pseudo-switches' paths and never reach
// a Node.
const (
	GCPClusterKey  = "gcp.fabricmap.io/cluster"
	GCPBlockKey    = "gcp.fabricmap.io/block"
	GCPSubblockKey = "gcp.fabricmap.io/subblock"
)

// GCPKeys are Google Cloud's layers' keys, top first.
var GCPKeys = []string{GCPClusterKey, GCPBlockKey, GCPSubblockKey}

// GCPMetadataNode is node's place as its own instance metadata gives it (the agent's cloud probe:
// physical_host_topology's cluster, block and sub-block, top first, and the NVLink domain where the sub-block
// is one), under the keys and values the API source gives the same instance, so that the two agree on every
// domain. Layers other than three are an error.
func GCPMetadataNode(node string, layers []string, nvlink string) (labels.Node, error) {
	if len(layers) != 3 {
		return labels.Node{}, fmt.Errorf("%d layers, want cluster, block and sub-block", len(layers))
	}
	l := map[string]string{GCPClusterKey: labels.Value(layers[0]), GCPBlockKey: labels.Value(layers[1]), GCPSubblockKey: labels.Value(layers[2])}
	if nvlink != "" {
		l[labels.CliqueLabel] = labels.Value(nvlink)
	}
	return labels.Node{Name: node, Labels: l}, nil
}
