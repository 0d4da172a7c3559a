package oci

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/sources/nodes"
)

// providerPrefix starts every OCI providerID: "oci://<instance OCID>", as OCI's cloud controller manager (and
// so OKE) sets spec.providerID.
const providerPrefix = "oci://"

// instancePattern is an instance OCID: "ocid1.instance.<realm>.<region>.<unique>" (the region may be empty,
// further parts may come before the unique ID), in lower-case letters, digits, '.', '-' and '_'.
var instancePattern = regexp.MustCompile(`^ocid1\.instance\.[a-z0-9_-]+\.[a-z0-9._-]*\.[a-z0-9_-]+$`)

// instanceNode is a Node that runs on an OCI instance.
type instanceNode struct {
	node     nodes.Node
	instance string // the instance OCID
}

// sorted are the cluster's Nodes by what their providerID says.
type sorted struct {
	// instances are the Nodes on OCI instances, by name.
	instances []instanceNode
	// malformed are OCI Nodes whose providerID names no instance OCID: "name (providerID)".
	malformed []string
	// others are the Nodes of another provider or with no providerID: "name (scheme)".
	others []string
	// schemes counts others by scheme ("aws", "no providerID").
	schemes map[string]int
}

// sortNodes sorts the Nodes by their providerID, each list by node name.
func sortNodes(all []nodes.Node) sorted {
	all = slices.SortedFunc(slices.Values(all), func(a, b nodes.Node) int { return strings.Compare(a.Name, b.Name) })
	s := sorted{schemes: map[string]int{}}
	for _, n := range all {
		rest, isOCI := strings.CutPrefix(n.ProviderID, providerPrefix)
		switch {
		case !isOCI:
			s.others = append(s.others, fmt.Sprintf("%s (%s)", n.Name, scheme(n.ProviderID)))
			s.schemes[scheme(n.ProviderID)]++
		case !instancePattern.MatchString(rest):
			s.malformed = append(s.malformed, fmt.Sprintf("%s (%s)", n.Name, n.ProviderID))
		default:
			s.instances = append(s.instances, instanceNode{node: n, instance: rest})
		}
	}
	return s
}

// scheme names a providerID's provider for the logs: the part before "://", or "no providerID".
func scheme(providerID string) string {
	if providerID == "" {
		return "no providerID"
	}
	if s, _, ok := strings.Cut(providerID, "://"); ok {
		return s
	}
	return "providerID " + providerID
}
