package labels

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the label source needs of the Helm chart: it reads the cluster's Nodes (their labels); its
// settings come from the aggregator's config file (aggregator.config).
var Chart = chartsurface.Surface{Values: []string{"aggregator.config"},
	Rules: []chartsurface.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: chartsurface.Read}}}
