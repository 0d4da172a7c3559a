package pipeline

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/sources/cloudlayers"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// SourceCloud is the name, in --source-priority, logs and metrics, of the nodes' own instance metadata as the
// agents' cloud probe reports it (NodeFabricReport spec.cloud): the network layers and NVLink domain of a
// node on Google Cloud or OCI, known without any cloud credentials in the cluster.
const SourceCloud = "cloud"

// cloudProviders are the providers whose instance metadata gives the node's layers, by the name of the API source
// that reads the same layers: the metadata's evidence takes that source's keys and values (cloudlayers), so both
// agree.
var cloudProviders = map[string]struct {
	keys []string
	node func(node string, layers []string, nvlink string) (labels.Node, error)
}{
	wellknown.SourceGCP: {keys: cloudlayers.GCPKeys, node: cloudlayers.GCPMetadataNode},
	wellknown.SourceOCI: {keys: cloudlayers.OCIKeys, node: cloudlayers.OCIMetadataNode},
}

// CloudEvidence is the evidence of the reports' cloud sections (SourceCloud): each node whose instance metadata
// gives its layers, as chains of pseudo-switches (labels.EvidenceAs), one provider at a time. A section with
// layers the provider's source cannot place is a Problem; a section without layers (AWS gives none) is none.
// It ranks below the reports and the cloud APIs (MergeBelow), so it places only the nodes they do not.
func CloudEvidence(reports []*v1alpha1.NodeFabricReport) (topology.Input, []topology.Problem) {
	byProvider := map[string][]labels.Node{}
	var problems []topology.Problem
	for i := range reports {
		c := reports[i].Spec.Cloud
		if c == nil || len(c.Layers) == 0 {
			continue
		}
		p, ok := cloudProviders[string(c.Provider)]
		if !ok {
			continue
		}
		n, err := p.node(reports[i].Name, c.Layers, c.NVLinkDomain)
		if err != nil {
			problems = append(problems, topology.Problem{Node: reports[i].Name, Source: SourceCloud,
				Reason: fmt.Sprintf("cloud section of provider %s: %v", c.Provider, err)})
			continue
		}
		byProvider[string(c.Provider)] = append(byProvider[string(c.Provider)], n)
	}
	var in topology.Input
	for _, provider := range slices.Sorted(maps.Keys(byProvider)) {
		got, left := labels.EvidenceAs(SourceCloud, byProvider[provider], cloudProviders[provider].keys)
		in.Nodes = append(in.Nodes, got.Nodes...)
		in.SwitchLinks = append(in.SwitchLinks, got.SwitchLinks...)
		problems = append(problems, left...)
	}
	return in, problems
}
