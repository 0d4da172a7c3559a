package ctl

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listNodeLabels returns every Node's labels by name, reading only the Nodes' metadata.
func listNodeLabels(ctx context.Context, r client.Reader) (map[string]map[string]string, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(nodeListGVK)
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, n := range list.Items {
		l := n.Labels
		if l == nil {
			l = map[string]string{}
		}
		out[n.Name] = l
	}
	return out, nil
}
