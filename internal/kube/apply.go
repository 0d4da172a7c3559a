// Package kube holds the small Kubernetes client helpers that fabricmap's controllers share.
package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply server-side-applies obj's metadata and spec (everything but status) as fieldManager, taking over
// conflicting fields: fabricmap is the only writer of what it owns. obj must carry apiVersion and kind.
func Apply(ctx context.Context, c client.Client, obj runtime.Object, fieldManager string) error {
	u, err := toApply(obj, "status")
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// ApplyStatus server-side-applies obj's status subresource as fieldManager.
func ApplyStatus(ctx context.Context, c client.Client, obj runtime.Object, fieldManager string) error {
	u, err := toApply(obj, "spec")
	if err != nil {
		return err
	}
	for _, f := range []string{"labels", "annotations", "ownerReferences"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying status of %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// toApply converts obj to an unstructured apply configuration without the named top-level field and without
// the server-owned metadata that a typed object carries as zero values.
func toApply(obj runtime.Object, drop string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T for apply: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("apply of %T %q needs apiVersion and kind", obj, u.GetName())
	}
	unstructured.RemoveNestedField(u.Object, drop)
	for _, f := range []string{"creationTimestamp", "resourceVersion", "uid", "managedFields", "generation"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u, nil
}
