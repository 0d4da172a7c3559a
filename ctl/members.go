package ctl

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listNodeLabels returns every Node's labels by name, reading only the Nodes' metadata.
func listNodeLabels(ctx context.Context, r client.Reader) (map[string]map[string]string, error) {
	labels, _, err := listNodeMetadata(ctx, r)
	return labels, err
}

// listNodeMetadata returns every Node's labels (never nil) and annotations by name, reading only the Nodes'
// metadata.
func listNodeMetadata(ctx context.Context, r client.Reader) (labels, annotations map[string]map[string]string, _ error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(nodeListGVK)
	if err := r.List(ctx, &list); err != nil {
		return nil, nil, fmt.Errorf("listing Nodes: %w", err)
	}
	labels = make(map[string]map[string]string, len(list.Items))
	annotations = make(map[string]map[string]string, len(list.Items))
	for _, n := range list.Items {
		labels[n.Name] = n.Labels
		if labels[n.Name] == nil {
			labels[n.Name] = map[string]string{}
		}
		annotations[n.Name] = n.Annotations
	}
	return labels, annotations, nil
}
