package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// gcpBase is the Compute Engine metadata server's path for the instance's own metadata.
const gcpBase = "/computeMetadata/v1/instance/"

// gcpTopology is the physical_host_topology attribute: where the instance's host sits, top first.
type gcpTopology struct {
	Cluster  string `json:"cluster"`
	Block    string `json:"block"`
	SubBlock string `json:"subBlock"`
	Host     string `json:"host"`
}

// gcpLayerNames name the layers of physical_host_topology, top first.
var gcpLayerNames = []string{"cluster", "block", "subBlock"}

// gcpGet reads one entry under instance/, asking as Compute Engine requires (Metadata-Flavor: Google) and
// checking that the answer comes from its metadata server (which says the same header back).
func (p *Probe) gcpGet(ctx context.Context, entry string) ([]byte, error) {
	b, h, err := get(ctx, p.http, p.opts.Endpoint+gcpBase+entry, http.Header{"Metadata-Flavor": {"Google"}})
	switch {
	case err != nil:
		return nil, fmt.Errorf("instance/%s: %w", entry, explain(ctx, err, p.opts.Timeout))
	case h.Get("Metadata-Flavor") != "Google":
		return nil, fmt.Errorf("instance/%s: the answer lacks Metadata-Flavor: Google: not Compute Engine's metadata server", entry)
	}
	return b, nil
}

// fetchGCP reads the instance's ID and zone, and its physical host topology where Compute Engine gives it:
// the layers cluster, block and sub-block, and on A4X and A4X Max machines (whose sub-block is an NVLink
// domain of 18 hosts) the sub-block as the NVLink domain.
func (p *Probe) fetchGCP(ctx context.Context) (*v1alpha1.CloudInstance, []string, error) {
	b, err := p.gcpGet(ctx, "id")
	if err != nil {
		return nil, nil, err
	}
	id, err := text(b)
	if err != nil {
		return nil, nil, fmt.Errorf("instance/id: %w", err)
	}
	inst := &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: id}
	var warns []string
	// The zone comes as projects/<number>/zones/<zone>.
	if b, err = p.gcpGet(ctx, "zone"); err != nil {
		warns = append(warns, "gcp: "+err.Error())
	} else if z, err := text(b); err == nil {
		inst.Zone = path.Base(z)
	}
	b, err = p.gcpGet(ctx, "attributes/physical_host_topology")
	switch {
	case errors.Is(err, errNotFound):
		return inst, warns, nil
	case err != nil:
		return inst, append(warns, "gcp: "+err.Error()), nil
	}
	var topo gcpTopology
	if err := json.Unmarshal(b, &topo); err != nil {
		return inst, append(warns, fmt.Sprintf("gcp: instance/attributes/physical_host_topology: %v", err)), nil
	}
	layers, more := layerPath(v1alpha1.CloudGCP, gcpLayerNames, topo.Cluster, topo.Block, topo.SubBlock)
	inst.Layers, warns = layers, append(warns, more...)
	if len(layers) == len(gcpLayerNames) {
		a4x, err := p.gcpA4X(ctx)
		switch {
		case err != nil:
			warns = append(warns, "gcp: "+err.Error()+": the NVLink domain is left out")
		case a4x:
			inst.NVLinkDomain = topo.SubBlock
		}
	}
	return inst, warns, nil
}

// gcpA4X says whether the instance is an A4X or A4X Max machine, whose sub-block is an NVLink domain. The
// machine type comes as projects/<number>/machineTypes/<type>.
func (p *Probe) gcpA4X(ctx context.Context) (bool, error) {
	b, err := p.gcpGet(ctx, "machine-type")
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(path.Base(strings.TrimSpace(string(b))), "a4x-"), nil
}
