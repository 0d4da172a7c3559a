package ibfabric

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the capture source needs of the Helm chart: its values (the ConfigMaps mounted as files); it
// reads no Kubernetes object through the API.
var Chart = chartsurface.Surface{Values: []string{"aggregator.capture"}}
