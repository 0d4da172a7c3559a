package ctl

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/fabricmap/fabricmap/sources/nodes"
)

// nodePager lists one page of Nodes and gives the next page's token ("" after the last).
type nodePager func(ctx context.Context, opts metav1.ListOptions) ([]nodes.Node, string, error)

// metadataPager lists the Nodes' names and labels (their metadata only).
func metadataPager(cfg *rest.Config) (nodePager, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes metadata client for %s: %w", cfg.Host, err)
	}
	resource := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	return func(ctx context.Context, opts metav1.ListOptions) ([]nodes.Node, string, error) {
		page, err := resource.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		out := make([]nodes.Node, 0, len(page.Items))
		for _, n := range page.Items {
			out = append(out, nodes.Node{Name: n.Name, Labels: n.Labels})
		}
		return out, page.Continue, nil
	}, nil
}

// wholePager lists the Nodes with their spec.providerID.
func wholePager(cfg *rest.Config) (nodePager, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for %s: %w", cfg.Host, err)
	}
	return func(ctx context.Context, opts metav1.ListOptions) ([]nodes.Node, string, error) {
		page, err := client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		out := make([]nodes.Node, 0, len(page.Items))
		for _, n := range page.Items {
			out = append(out, nodes.Node{Name: n.Name, Labels: n.Labels, ProviderID: n.Spec.ProviderID})
		}
		return out, page.Continue, nil
	}, nil
}
