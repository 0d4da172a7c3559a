package aws

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the aws source needs of the Helm chart: its values (cloud.aws, with cloud.provider) and the
// cluster's Nodes, which it joins by their spec.providerID.
var Chart = chartsurface.Surface{Values: []string{"cloud.provider", "cloud.aws"},
	Rules: []chartsurface.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: chartsurface.Read}}}
