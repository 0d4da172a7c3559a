// Package applyconfig turns a typed object into the body of a server-side apply request. It depends on
// apimachinery only, so that the agent can use it without linking a controller framework.
package applyconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object converts obj to an unstructured apply configuration of its metadata and spec: status and the
// server-owned metadata that a typed object carries as zero values are dropped. obj must carry apiVersion and
// kind.
func Object(obj runtime.Object) (*unstructured.Unstructured, error) {
	return convert(obj, "status")
}

// Status converts obj to an unstructured apply configuration of its status subresource: spec and the
// metadata a status write must not carry (labels, annotations, owner references) are dropped.
func Status(obj runtime.Object) (*unstructured.Unstructured, error) {
	u, err := convert(obj, "spec")
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"labels", "annotations", "ownerReferences"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u, nil
}

func convert(obj runtime.Object, drop string) (*unstructured.Unstructured, error) {
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
