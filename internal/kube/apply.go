// Package kube holds the small Kubernetes client helpers that fabricmap's controllers share.
package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/applyconfig"
)

// Apply server-side-applies obj's metadata and spec (everything but status) as fieldManager, taking over
// conflicting fields: fabricmap is the only writer of what it owns. obj must carry apiVersion and kind.
func Apply(ctx context.Context, c client.Client, obj runtime.Object, fieldManager string) error {
	_, err := ApplyVersion(ctx, c, obj, fieldManager)
	return err
}

// ApplyVersion is Apply that returns the resource version the API server gave the object.
func ApplyVersion(ctx context.Context, c client.Client, obj runtime.Object, fieldManager string) (string, error) {
	u, err := applyconfig.Object(obj)
	if err != nil {
		return "", err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("applying %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return u.GetResourceVersion(), nil
}

// ApplyStatus server-side-applies obj's status subresource as fieldManager, and returns the resource version
// the API server gave the object.
func ApplyStatus(ctx context.Context, c client.Client, obj runtime.Object, fieldManager string) (string, error) {
	u, err := applyconfig.Status(obj)
	if err != nil {
		return "", err
	}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("applying status of %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return u.GetResourceVersion(), nil
}
