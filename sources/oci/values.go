package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The label keys under which the source gives each Node's placement to labels.EvidenceAs, top first: the HPC
// island, the network block within it, the local block within that. They name the pseudo-switches' levels
// only; fabricmap writes no Node label under them.
const (
	KeyHPCIsland    = "oci.fabricmap.io/hpc-island"
	KeyNetworkBlock = "oci.fabricmap.io/network-block"
	KeyLocalBlock   = "oci.fabricmap.io/local-block"
)

// Keys are the source's label keys, top first.
var Keys = []string{KeyHPCIsland, KeyNetworkBlock, KeyLocalBlock}

// Prefixes of the values, one per kind of OCID, so that a domain's name says what it is.
const (
	prefixHPCIsland       = "hpc-island"
	prefixNetworkBlock    = "network-block"
	prefixLocalBlock      = "local-block"
	prefixGPUMemoryFabric = "gpu-fabric"
)

// tailLength is how many characters of an OCID's end a value keeps: as many as OCI's console shows of an
// abbreviated OCID ("…x7k2qa"), so that a domain can be found there.
const tailLength = 6

// value maps an OCID to a label value, and so to a domain's name: OCIDs are longer than the 63 characters a
// label value may have. It is the prefix, the OCID's last six letters and digits, and the first 8 hex digits
// of the SHA-256 of the whole OCID, joined by '-' ("local-block-x7k2qa-3f9a12bc"; at most 29 characters): the
// same OCID always gives the same value, two OCIDs that end alike still differ, and the value is valid
// whatever the OCID holds. An empty OCID gives "".
func value(prefix, ocid string) string {
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
	parts := []string{prefix}
	if len(tail) > 0 {
		parts = append(parts, string(tail))
	}
	return strings.Join(append(parts, hex.EncodeToString(sum[:4])), "-")
}
