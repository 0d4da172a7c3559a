package oci

import (
	"fmt"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// MetadataNode is node's place as its own instance metadata gives it (the agent's cloud probe: OCI's
// rdmaTopologyData HPC island, network block and local block, top first, and its GPU memory fabric), under
// the keys and values the API source gives the same host, so that the two agree on every domain. Layers other
// than three are an error.
func MetadataNode(node string, layers []string, nvlink string) (labels.Node, error) {
	if len(layers) != 3 {
		return labels.Node{}, fmt.Errorf("%d layers, want HPC island, network block and local block", len(layers))
	}
	l := map[string]string{
		KeyHPCIsland:    value(prefixHPCIsland, layers[0]),
		KeyNetworkBlock: value(prefixNetworkBlock, layers[1]),
		KeyLocalBlock:   value(prefixLocalBlock, layers[2]),
	}
	if nvlink != "" {
		l[labels.CliqueLabel] = value(prefixGPUMemoryFabric, nvlink)
	}
	return labels.Node{Name: node, Labels: l}, nil
}
