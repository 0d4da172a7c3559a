package placer

import (
	corev1 "k8s.io/api/core/v1"
)

// NodeLabels maps node names to their labels.
func NodeLabels(nodes []corev1.Node) map[string]map[string]string {
	out := make(map[string]map[string]string, len(nodes))
	for i := range nodes {
		out[nodes[i].Name] = nodes[i].Labels
	}
	return out
}
