package cloudlayers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/fabricmap/fabricmap/sources/labels"
)

// The label keys under which OCI's evidence gives each Node's placement to labels.EvidenceAs, top first: the HPC
// island, the network block within it, the local block within that. They name the pseudo-switches' levels
// only; fabricmap writes no Node label under them.
const (
	OCIHPCIslandKey    = "oci.fabricmap.io/hpc-island"
	OCINetworkBlockKey = "oci.fabricmap.io/network-block"
	OCILocalBlockKey   = "oci.fabricmap.io/local-block"
)

// OCIKeys are OCI's layers' keys, top first.
var OCIKeys = []string{OCIHPCIslandKey, OCINetworkBlockKey, OCILocalBlockKey}

// OCIKind is a kind of OCID that names one of a host's layers; its value is the prefix of the layer's values, so
// that a domain's name says what it is.
type OCIKind string

// The kinds of OCID a host's place is made of.
const (
	OCIHPCIsland       OCIKind = "hpc-island"
	OCINetworkBlock    OCIKind = "network-block"
	OCILocalBlock      OCIKind = "local-block"
	OCIGPUMemoryFabric OCIKind = "gpu-fabric"
)

// tailLength is how many characters of an OCID's end a value keeps: as many as OCI's console shows of an
// abbreviated OCID ("…x7k2qa"), so that a domain can be found there.
const tailLength = 6

// Value maps an OCID of kind k to a label value, and so to a domain's name: OCIDs are longer than the 63
// characters a label value may have. It is the prefix, the OCID's last six letters and digits, and the first 8
// hex digits of the SHA-256 of the whole OCID, joined by '-' ("local-block-x7k2qa-3f9a12bc"; at most 29
// characters): the same OCID always gives the same value, two OCIDs that end alike still differ, and the value
// is valid whatever the OCID holds. An empty OCID gives "".
func (k OCIKind) Value(ocid string) string {
	if ocid == "" {
		return ""
	}
	var tail []byte
	for i := len(ocid) - 1; i >= 0 && len(tail) < tailLength; i-- {
		c := ocid[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == '.' {
			break // the unique ID is the OCID's last part
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			tail = append(tail, c)
		}
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	sum := sha256.Sum256([]byte(ocid))
	parts := []string{string(k)}
	if len(tail) > 0 {
		parts = append(parts, string(tail))
	}
	return strings.Join(append(parts, hex.EncodeToString(sum[:4])), "-")
}

// OCILabels are a host's place as the evidence gives it, from its HPC island, network block, local block and GPU
// memory fabric OCIDs: their values under OCIKeys, and the clique label where the host has a GPU memory fabric
// (fabric "" gives none).
func OCILabels(island, block, local, fabric string) map[string]string {
	l := map[string]string{
		OCIHPCIslandKey:    OCIHPCIsland.Value(island),
		OCINetworkBlockKey: OCINetworkBlock.Value(block),
		OCILocalBlockKey:   OCILocalBlock.Value(local),
	}
	if fabric != "" {
		l[labels.CliqueLabel] = OCIGPUMemoryFabric.Value(fabric)
	}
	return l
}

// OCIMetadataNode is node's place as its own instance metadata gives it (the agent's cloud probe: OCI's
// rdmaTopologyData HPC island, network block and local block, top first, and its GPU memory fabric), under
// the keys and values the API source gives the same host (OCILabels), so that the two agree on every domain.
// Layers other than three are an error.
func OCIMetadataNode(node string, layers []string, nvlink string) (labels.Node, error) {
	if len(layers) != 3 {
		return labels.Node{}, fmt.Errorf("%d layers, want HPC island, network block and local block", len(layers))
	}
	return labels.Node{Name: node, Labels: OCILabels(layers[0], layers[1], layers[2], nvlink)}, nil
}
