package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// Scheme returns a scheme with every type fabricmap reads or writes: the built-in kinds, NodeFabricReport and
// Volcano's HyperNode.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, topologyv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("building scheme: %v", err)) // static registrations; cannot fail
		}
	}
	return s
}
