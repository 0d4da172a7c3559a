package aggregator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources"
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

// nodeListPage is how many Nodes one live list request asks for.
const nodeListPage = 500

// ProviderIDLister lists the Nodes with their spec.providerID, for the cloud sources (sources.Spec.ProviderIDs):
// straight from the API server (reader is the manager's API reader), page by page, since the manager caches
// Node metadata only. Served from the API server's watch cache (resourceVersion 0); a cloud source polls every
// few minutes, and each page is dropped once read.
func ProviderIDLister(reader client.Reader) nodes.Lister {
	return func(ctx context.Context) ([]nodes.Node, error) {
		var out []nodes.Node
		opts := []client.ListOption{client.Limit(nodeListPage)}
		for {
			var page corev1.NodeList
			if err := reader.List(ctx, &page, opts...); err != nil {
				return nil, fmt.Errorf("listing Nodes: %w", err)
			}
			for _, n := range page.Items {
				out = append(out, nodes.Node{Name: n.Name, Labels: n.Labels, ProviderID: n.Spec.ProviderID})
			}
			if page.Continue == "" {
				return out, nil
			}
			opts = []client.ListOption{client.Limit(nodeListPage), client.Continue(page.Continue)}
		}
	}
}

// GiveNodes hands the sources that read the cluster's Nodes (sources.NodeReader) their lister: the Node metadata
// in cache (the manager's cache, which the reconciler keeps anyway), or, for the sources that join Nodes by
// spec.providerID (sources.Spec.ProviderIDs), the Nodes read from live (the manager's API reader).
func GiveNodes(srcs []sources.Spec, cache, live client.Reader) {
	for _, s := range srcs {
		nr, ok := s.Source.(sources.NodeReader)
		switch {
		case !ok:
		case s.ProviderIDs:
			nr.UseNodes(ProviderIDLister(live))
		default:
			nr.UseNodes(NodeLister(cache))
		}
	}
}
