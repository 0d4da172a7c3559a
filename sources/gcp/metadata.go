package gcp

import (
	"fmt"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// MetadataNode is node's place as its own instance metadata gives it (the agent's cloud probe:
// physical_host_topology's cluster, block and sub-block, top first, and the NVLink domain where the sub-block
// is one), under the keys and values the API source gives the same instance, so that the two agree on every
// domain. Layers other than three are an error.
func MetadataNode(node string, layers []string, nvlink string) (labels.Node, error) {
	if len(layers) != 3 {
		return labels.Node{}, fmt.Errorf("%d layers, want cluster, block and sub-block", len(layers))
	}
	l := map[string]string{ClusterKey: labels.Value(layers[0]), BlockKey: labels.Value(layers[1]), SubblockKey: labels.Value(layers[2])}
	if nvlink != "" {
		l[labels.CliqueLabel] = labels.Value(nvlink)
	}
	return labels.Node{Name: node, Labels: l}, nil
}
