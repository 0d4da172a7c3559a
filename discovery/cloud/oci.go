package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// ociBase is OCI's instance metadata service, version 2, which requires ociAuth on every request.
const ociBase = "/opc/v2/"

// ociAuth is the header OCI's IMDS v2 requires.
var ociAuth = http.Header{"Authorization": {"Bearer Oracle"}}

// ociTopology is host/rdmaTopologyData: where the host sits in OCI's RDMA network, top first, and its GPU
// memory fabric.
type ociTopology struct {
	HPCIslandID     string `json:"customerHPCIslandId"`
	NetworkBlock    string `json:"customerNetworkBlock"`
	LocalBlock      string `json:"customerLocalBlock"`
	GPUMemoryFabric string `json:"customerGpuMemoryFabric"`
}

// ociLayerNames name the layers of rdmaTopologyData, top first.
var ociLayerNames = []string{"customerHPCIslandId", "customerNetworkBlock", "customerLocalBlock"}

// ociGet reads one entry under /opc/v2/.
func (p *Probe) ociGet(ctx context.Context, entry string) ([]byte, error) {
	b, _, err := get(ctx, p.http, p.opts.Endpoint+ociBase+entry, ociAuth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", entry, explain(ctx, err, p.opts.Timeout))
	}
	return b, nil
}

// fetchOCI reads the instance's OCID and availability domain, and its host's RDMA topology where OCI gives it:
// the layers HPC island, network block and local block, and the GPU memory fabric (a GB200 or GB300 rack's
// NVLink domain) as the NVLink domain.
func (p *Probe) fetchOCI(ctx context.Context) (*v1alpha1.CloudInstance, []string, error) {
	b, err := p.ociGet(ctx, "instance/id")
	if err != nil {
		return nil, nil, err
	}
	id, err := text(b)
	if err != nil {
		return nil, nil, fmt.Errorf("instance/id: %w", err)
	}
	inst := &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: id}
	var warns []string
	if b, err = p.ociGet(ctx, "instance/availabilityDomain"); err != nil {
		warns = append(warns, "oci: "+err.Error())
	} else if ad, err := text(b); err == nil {
		inst.Zone = ad
	}
	b, err = p.ociGet(ctx, "host/rdmaTopologyData")
	switch {
	case errors.Is(err, errNotFound):
		return inst, warns, nil
	case err != nil:
		return inst, append(warns, "oci: "+err.Error()), nil
	}
	var topo ociTopology
	if err := json.Unmarshal(b, &topo); err != nil {
		return inst, append(warns, fmt.Sprintf("oci: host/rdmaTopologyData: %v", err)), nil
	}
	layers, more := layerPath(v1alpha1.CloudOCI, ociLayerNames, topo.HPCIslandID, topo.NetworkBlock, topo.LocalBlock)
	inst.Layers, inst.NVLinkDomain = layers, topo.GPUMemoryFabric
	return inst, append(warns, more...), nil
}
