package oci

import (
	"fmt"
	"regexp"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// providerScheme is the scheme of every OCI providerID: "oci://<instance OCID>", as OCI's cloud controller
// manager (and so OKE) sets spec.providerID.
const providerScheme = "oci"

// instancePattern is an instance OCID: "ocid1.instance.<realm>.<region>.<unique>" (the region may be empty,
// further parts may come before the unique ID), in lower-case letters, digits, '.', '-' and '_'.
var instancePattern = regexp.MustCompile(`^ocid1\.instance\.[a-z0-9_-]+\.[a-z0-9._-]*\.[a-z0-9_-]+$`)

// instanceNode is a Node that runs on an OCI instance.
type instanceNode struct {
	node     nodes.Node
	instance string // the instance OCID
}

// sortNodes sorts the Nodes by their providerID (cloudsource.SortNodes), each list by node name: the Nodes on
// OCI instances, the OCI Nodes whose providerID names no instance OCID, and the others.
func sortNodes(all []nodes.Node) cloudsource.Sorted[instanceNode] {
	return cloudsource.SortNodes(all, providerScheme, func(n nodes.Node, rest string) (instanceNode, error) {
		if !instancePattern.MatchString(rest) {
			return instanceNode{}, fmt.Errorf("providerID %s names no instance OCID", n.ProviderID)
		}
		return instanceNode{node: n, instance: rest}, nil
	})
}
