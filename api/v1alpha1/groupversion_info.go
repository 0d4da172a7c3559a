// Package v1alpha1 holds the fabricmap.io/v1alpha1 API: the NodeFabricReport that each agent writes
// about its own node.
//
// +kubebuilder:object:generate=true
// +groupName=fabricmap.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of fabricmap's own objects.
	GroupVersion = schema.GroupVersion{Group: "fabricmap.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// NodeFabricReportResource is the plural resource name of NodeFabricReport.
const NodeFabricReportResource = "nodefabricreports"
