package placer

import (
	"encoding/json"
	"fmt"

	"github.com/fabricmap/fabricmap/wellknown"
)

// Koordinator's gather strategies.
const (
	MustGather   = "MustGather"
	PreferGather = "PreferGather"
)

// ParseNetworkTopologySpec reads Koordinator's gang.scheduling.koordinator.sh/network-topology-spec
// ({"gatherStrategy":[{"layer":"SpineLayer","strategy":"PreferGather"},{"layer":"BlockLayer","strategy":"MustGather"}]})
// and returns the layers the gang must gather within; PreferGather layers are soft (placement prefers lower
// tiers anyway) and are left out.
func ParseNetworkTopologySpec(spec string) ([]string, error) {
	var s struct {
		GatherStrategy []struct {
			Layer    string `json:"layer"`
			Strategy string `json:"strategy"`
		} `json:"gatherStrategy"`
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", wellknown.KoordinatorTopology, err)
	}
	var must []string
	for i, r := range s.GatherStrategy {
		switch {
		case r.Layer == "":
			return nil, fmt.Errorf("annotation %s: gatherStrategy[%d] names no layer", wellknown.KoordinatorTopology, i)
		case r.Strategy == MustGather:
			must = append(must, r.Layer)
		case r.Strategy == PreferGather:
		default:
			return nil, fmt.Errorf("annotation %s: gatherStrategy[%d].strategy %q: want %s or %s", wellknown.KoordinatorTopology, i, r.Strategy, MustGather, PreferGather)
		}
	}
	return must, nil
}
