package nvml

import (
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery"
)

// Inventory is everything one run of the probe saw of a node's GPUs, including detail (NVLink peers) the
// report has no field for yet.
type Inventory struct {
	// GPUs are the node's GPUs in NVML index order.
	GPUs []GPU `json:"gpus,omitempty"`
	// NVLinkDomain is "<clusterUUID>.<cliqueId>" when every GPU completed NVLink fabric registration into
	// one clique; empty otherwise (see the package's domain rules and Warnings for why).
	NVLinkDomain string `json:"nvlinkDomain,omitempty"`
	// NVLinkSubDomain is the chassis (rack) every GPU reports through NVML's platform info, when there is an
	// NVLinkDomain: the part of an NVLink domain that spans racks the node sits in. Empty otherwise.
	NVLinkSubDomain string `json:"nvlinkSubDomain,omitempty"`
	// NotApplicable, when non-empty, says why the node has nothing for NVML to see.
	NotApplicable string `json:"notApplicable,omitempty"`
	// Warnings are problems that did not stop the run, each naming the GPU it concerns.
	Warnings []string `json:"warnings,omitempty"`
}

// GPU is one GPU as NVML describes it.
type GPU struct {
	// Index is the NVML device index.
	Index int `json:"index"`
	// UUID is the GPU's UUID ("GPU-…").
	UUID string `json:"uuid"`
	// Model is the product name NVML reports.
	Model string `json:"model,omitempty"`
	// PCIBusID is the GPU's PCI address in sysfs form ("0000:3b:00.0"); empty when NVML gave none.
	PCIBusID string `json:"pciBusID,omitempty"`
	// NUMANode is the GPU's NUMA node, or -1 when unknown.
	NUMANode int `json:"numaNode"`
	// Fabric is the GPU's multi-node NVLink fabric registration.
	Fabric Fabric `json:"fabric"`
	// Chassis identifies the chassis (rack) that holds the GPU, from NVML's platform info; empty when NVML
	// gives none (see readChassis).
	Chassis string `json:"chassis,omitempty"`
	// NVLinks are the GPU's active NVLinks in link order.
	NVLinks []NVLink `json:"nvlinks,omitempty"`
	// ActiveNVLinks is the number of active NVLinks (len(NVLinks)).
	ActiveNVLinks int `json:"activeNVLinks"`
}

// NVLink is one active NVLink of a GPU and what the driver says is at its far end.
type NVLink struct {
	// Link is the link number on the GPU (0 … NVLINK_MAX_LINKS-1).
	Link int `json:"link"`
	// RemotePCIBusID is the far end's PCI address in sysfs form; empty when the driver does not report it.
	RemotePCIBusID string `json:"remotePCIBusID,omitempty"`
	// RemoteType is the far end's kind: GPU, Switch, IBMNPU or Unknown; empty when the driver does not say.
	RemoteType string `json:"remoteType,omitempty"`
	// RemoteGPUIndex is the NVML index of the far end when it is a GPU of this node, else -1.
	RemoteGPUIndex int `json:"remoteGPUIndex"`
}

// Result turns the inventory into the probe's report fragment.
func (inv *Inventory) Result() discovery.Result {
	res := discovery.Result{
		NVLinkDomain:    inv.NVLinkDomain,
		NVLinkSubDomain: inv.NVLinkSubDomain,
		NotApplicable:   inv.NotApplicable,
		Warnings:        append([]string(nil), inv.Warnings...),
	}
	for _, g := range inv.GPUs {
		res.GPUs = append(res.GPUs, g.apiGPU())
	}
	return res
}

// apiGPU converts g to the report's GPU type.
func (g GPU) apiGPU() v1alpha1.GPU {
	out := v1alpha1.GPU{
		Index:       int32(g.Index),
		UUID:        g.UUID,
		Model:       g.Model,
		PCIBusID:    g.PCIBusID,
		FabricState: string(g.Fabric.State),
	}
	if g.NUMANode >= 0 {
		n := int32(g.NUMANode)
		out.NUMANode = &n
	}
	if g.Fabric.ClusterUUID != "" {
		out.ClusterUUID = g.Fabric.ClusterUUID
		c := int64(g.Fabric.CliqueID)
		out.CliqueID = &c
	}
	return out
}
