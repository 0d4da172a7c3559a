package cloud

import (
	"fmt"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// bound keeps an instance within the CRD's limits (v1alpha1.MaxCloudIDLength, MaxCloudLayers), saying in a
// warning what it dropped: a zone or NVLink domain past the limit is left out, and the layers end before the
// first that is past it (the layers below it would no longer be a path from the top). An instance ID past the
// limit is an error: a cut ID would name another instance.
func bound(inst *v1alpha1.CloudInstance) (*v1alpha1.CloudInstance, []string, error) {
	if len(inst.InstanceID) > v1alpha1.MaxCloudIDLength {
		return nil, nil, fmt.Errorf("an instance ID of %d characters is past the report's bound of %d",
			len(inst.InstanceID), v1alpha1.MaxCloudIDLength)
	}
	var warns []string
	tooLong := func(field, v string) bool {
		if len(v) <= v1alpha1.MaxCloudIDLength {
			return false
		}
		warns = append(warns, fmt.Sprintf("%s: %s of %d characters is past the report's bound of %d: left out",
			inst.Provider, field, len(v), v1alpha1.MaxCloudIDLength))
		return true
	}
	if tooLong("zone", inst.Zone) {
		inst.Zone = ""
	}
	if tooLong("NVLink domain", inst.NVLinkDomain) {
		inst.NVLinkDomain = ""
	}
	for i, l := range inst.Layers {
		if tooLong(fmt.Sprintf("layer %d", i+1), l) {
			inst.Layers = inst.Layers[:i]
			break
		}
	}
	if len(inst.Layers) > v1alpha1.MaxCloudLayers {
		warns = append(warns, fmt.Sprintf("%s: %d layers, past the report's bound of %d: the bottom ones left out",
			inst.Provider, len(inst.Layers), v1alpha1.MaxCloudLayers))
		inst.Layers = inst.Layers[:v1alpha1.MaxCloudLayers]
	}
	if len(inst.Layers) == 0 {
		inst.Layers = nil
	}
	return inst, warns, nil
}

// layerPath makes layers (top first) a path from the top: it ends before the first empty layer, with a warning when
// a layer below that one was given.
func layerPath(provider v1alpha1.CloudProvider, names []string, layers ...string) ([]string, []string) {
	for i, l := range layers {
		if l != "" {
			continue
		}
		for j := i + 1; j < len(layers); j++ {
			if layers[j] != "" {
				return layers[:i], []string{fmt.Sprintf("%s: the topology gives %s but no %s: the layers end above it",
					provider, names[j], names[i])}
			}
		}
		return layers[:i], nil
	}
	return layers, nil
}
