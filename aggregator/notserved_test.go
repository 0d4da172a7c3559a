package aggregator

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestNotServed tells an output API that is not served (no mapping; a 404 with no Status body, as for a CRD
// removed under a client that still maps it) from a missing object or namespace, which are real errors.
func TestNotServed(t *testing.T) {
	topologies := schema.GroupResource{Group: "kai.scheduler", Resource: "topologies"}
	pageNotFound := apierrors.NewGenericServerResponse(404, "patch", topologies, "fabricmap", "404 page not found", 0, true)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "no mapping", err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "kai.scheduler", Kind: "Topology"}}, want: true},
		{name: "404 page not found", err: pageNotFound, want: true},
		{name: "404 page not found, wrapped", err: fmt.Errorf("applying Topology %q: %w", "fabricmap", pageNotFound), want: true},
		{name: "object not found", err: apierrors.NewNotFound(topologies, "fabricmap")},
		{name: "namespace not found", err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "fabricmap-system")},
		{name: "forbidden", err: apierrors.NewForbidden(topologies, "fabricmap", errors.New("no RBAC"))},
		{name: "other", err: errors.New("connection refused")},
		{name: "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := notServed(tc.err); got != tc.want {
				var causes []metav1.StatusCause
				if s, ok := tc.err.(apierrors.APIStatus); ok && s.Status().Details != nil {
					causes = s.Status().Details.Causes
				}
				t.Errorf("notServed(%v) = %v, want %v (causes %v)", tc.err, got, tc.want, causes)
			}
		})
	}
}
