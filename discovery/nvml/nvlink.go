package nvml

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// readNVLinks lists a GPU's active NVLinks and what the driver says is at their far ends. NOT_SUPPORTED
// (no NVLink, or no answer for that detail) and INVALID_ARGUMENT (a link number past the GPU's last link)
// are normal and silent; other failures come back as problems, one per failed query.
func readNVLinks(dev gonvml.Device, syms *symbols) ([]NVLink, []string) {
	var (
		links    []NVLink
		problems []string
	)
	remoteType := syms.has(symNvLinkRemoteDevType)
	for l := 0; l < gonvml.NVLINK_MAX_LINKS; l++ {
		state, ret := dev.GetNvLinkState(l)
		if silentLinkError(ret) {
			continue
		}
		if ret != gonvml.SUCCESS {
			problems = append(problems, fmt.Sprintf("link %d state: %v", l, ret))
			continue
		}
		if state != gonvml.FEATURE_ENABLED {
			continue
		}
		link := NVLink{Link: l, RemoteGPUIndex: -1}
		pci, ret := dev.GetNvLinkRemotePciInfo(l)
		switch {
		case ret == gonvml.SUCCESS:
			if id, ok := busIDFromPciInfo(pci); ok {
				link.RemotePCIBusID = id
			}
		case !silentLinkError(ret):
			problems = append(problems, fmt.Sprintf("link %d remote PCI info: %v", l, ret))
		}
		if remoteType {
			t, ret := dev.GetNvLinkRemoteDeviceType(l)
			switch {
			case ret == gonvml.SUCCESS:
				link.RemoteType = remoteTypeName(t)
			case !silentLinkError(ret):
				problems = append(problems, fmt.Sprintf("link %d remote device type: %v", l, ret))
			}
		}
		links = append(links, link)
	}
	return links, problems
}

// silentLinkError reports whether a per-link NVML error is routine.
func silentLinkError(ret gonvml.Return) bool {
	return ret == gonvml.ERROR_NOT_SUPPORTED || ret == gonvml.ERROR_INVALID_ARGUMENT
}

// remoteTypeName names NVML's NVLINK_DEVICE_TYPE_* values.
func remoteTypeName(t gonvml.IntNvLinkDeviceType) string {
	switch t {
	case gonvml.NVLINK_DEVICE_TYPE_GPU:
		return "GPU"
	case gonvml.NVLINK_DEVICE_TYPE_SWITCH:
		return "Switch"
	case gonvml.NVLINK_DEVICE_TYPE_IBMNPU:
		return "IBMNPU"
	default:
		return "Unknown"
	}
}

// resolvePeers fills in RemoteGPUIndex for links whose far end is another GPU of the same node.
func resolvePeers(gpus []GPU) {
	byBusID := make(map[string]int, len(gpus))
	for _, g := range gpus {
		if g.PCIBusID != "" {
			byBusID[g.PCIBusID] = g.Index
		}
	}
	for gi := range gpus {
		for li := range gpus[gi].NVLinks {
			l := &gpus[gi].NVLinks[li]
			if idx, ok := byBusID[l.RemotePCIBusID]; ok && l.RemotePCIBusID != "" {
				l.RemoteGPUIndex = idx
			}
		}
	}
}
