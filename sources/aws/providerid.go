package aws

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// RegionLabel is the well-known Node label that names the Node's region, as the cloud provider sets it.
const RegionLabel = "topology.kubernetes.io/region"

// providerScheme is the scheme of every AWS providerID: "aws:///<zone>/<instance-id>" (the zone may be empty).
const providerScheme = "aws"

var (
	// instancePattern is an EC2 instance ID: "i-" and 8 or 17 hexadecimal digits.
	instancePattern = regexp.MustCompile(`^i-[0-9a-f]{8}(?:[0-9a-f]{9})?$`)
	// regionPattern is a region name: words joined by "-", then a number (us-east-1, us-gov-west-1,
	// eusc-de-east-1).
	regionPattern = regexp.MustCompile(`^[a-z]+(?:-[a-z]+)+-[0-9]+$`)
	// zoneRegion is the region at the start of a zone name: us-east-1a, Local Zones (us-east-1-dfw-2a) and
	// Wavelength Zones (us-east-1-wl1-bos-wlz-1) alike.
	zoneRegion = regexp.MustCompile(`^[a-z]+(?:-[a-z]+)+-[0-9]+`)
)

// instanceNode is a Node that runs on an EC2 instance.
type instanceNode struct {
	node     nodes.Node
	zone     string // from the providerID; may be empty
	instance string
}

// byProvider are the cluster's Nodes by what their providerID says.
type byProvider struct {
	// instances are the Nodes on EC2 instances, by name.
	instances []instanceNode
	// notInstances are AWS Nodes whose providerID names no EC2 instance (Fargate, a malformed ID): "name
	// (providerID … names no EC2 instance)".
	notInstances []string
	// others are the Nodes of another provider or with no providerID: "name (scheme)".
	others []string
}

// sortNodes sorts the Nodes by their providerID (cloudsource.SortNodes), each list by node name.
func sortNodes(all []nodes.Node) byProvider {
	s := cloudsource.SortNodes(all, providerScheme, func(n nodes.Node, rest string) (instanceNode, error) {
		zone, instance, ok := parsePath(rest)
		if !ok {
			return instanceNode{}, fmt.Errorf("providerID %s names no EC2 instance", n.ProviderID)
		}
		return instanceNode{node: n, zone: zone, instance: instance}, nil
	})
	return byProvider{instances: s.Ours, notInstances: s.MalformedNames(), others: s.OtherNames()}
}

// instanceIDs returns the instances of ns, sorted, each once.
func instanceIDs(ns []instanceNode) []string {
	ids := make([]string, 0, len(ns))
	for _, n := range ns {
		ids = append(ids, n.instance)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// parsePath splits what follows "aws://" in a providerID, "/<zone>/<instance-id>", into the zone (possibly
// empty) and the instance ID; ok is false when it names no EC2 instance.
func parsePath(rest string) (zone, instance string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if len(parts) != 2 || !instancePattern.MatchString(parts[1]) {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// nodesRegion tells the one region of the Nodes: each Node's topology.kubernetes.io/region label, or else
// the region its providerID's zone is in. Nodes in several regions, or one whose region cannot be told, are
// an error that asks for --aws-region.
func nodesRegion(ns []instanceNode) (string, error) {
	region, first := "", ""
	for _, n := range ns {
		r := n.node.Labels[RegionLabel]
		if r == "" {
			r = zoneRegion.FindString(n.zone)
		}
		switch {
		case r == "":
			return "", fmt.Errorf("the region of Node %s cannot be told (no %s label, no zone in providerID %q): give --aws-region", n.node.Name, RegionLabel, n.node.ProviderID)
		case region == "":
			region, first = r, n.node.Name
		case r != region:
			return "", fmt.Errorf("the Nodes are in several regions (%s: %s, %s: %s): give --aws-region; the source reads one region", first, region, n.node.Name, r)
		}
	}
	return region, nil
}
