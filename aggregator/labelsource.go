package aggregator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// ValidateLabelSourceKeys refuses label-source keys that are invalid or that fabricmap itself writes: reading
// back its own output would make the tree feed on itself.
func ValidateLabelSourceKeys(keys []string, written hypernodegen.LabelKeys) error {
	if err := labels.ValidateKeys(keys); err != nil {
		return fmt.Errorf("label source: %w", err)
	}
	for _, k := range keys {
		if slices.Contains(written.All(), k) {
			return fmt.Errorf("label source: key %s is one fabricmap writes (--label-keys/--accelerator-label-key); read keys an admin maintains", k)
		}
	}
	return nil
}

// NodeLister lists the Nodes' names and labels through reader (metadata only): the label source's Nodes in
// the aggregator, where reader is the manager's cache.
func NodeLister(reader client.Reader) nodes.Lister {
	return func(ctx context.Context) ([]nodes.Node, error) {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := reader.List(ctx, &list); err != nil {
			return nil, fmt.Errorf("listing node metadata: %w", err)
		}
		out := make([]nodes.Node, 0, len(list.Items))
		for _, n := range list.Items {
			out = append(out, nodes.Node{Name: n.Name, Labels: n.Labels})
		}
		return out, nil
	}
}
