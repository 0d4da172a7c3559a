package gcp

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the gcp source needs of the Helm chart: its values (cloud.gcp, with cloud.provider) and the
// cluster's Nodes, which it joins by their spec.providerID.
var Chart = chartsurface.Surface{Values: []string{"cloud.provider", "cloud.gcp"},
	Rules: []chartsurface.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: chartsurface.Read}}}
