package oci

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the oci source needs of the Helm chart: its values (cloud.oci, with cloud.provider) and the
// cluster's Nodes, which it joins by their spec.providerID.
var Chart = chartsurface.Surface{Values: []string{"cloud.provider", "cloud.oci"},
	Rules: []chartsurface.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: chartsurface.Read}}}
