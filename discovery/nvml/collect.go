package nvml

import (
	"context"
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// collect reads every GPU of an initialised library and derives the node's NVLink domain. Identity reads
// (handle, UUID, PCI info) that fail are errors naming the GPU; everything else degrades to a warning.
func (p *Probe) collect(ctx context.Context) (*Inventory, error) {
	count, ret := p.lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("count GPUs: %w", ret)
	}
	inv := &Inventory{}
	if count == 0 {
		inv.NotApplicable = "NVML reports no GPU on this node"
		return inv, nil
	}
	syms := newSymbols(p.lib)
	for i := 0; i < count; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("nvml probe interrupted before GPU %d: %w", i, err)
		}
		dev, ret := p.lib.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d: get device handle: %w", i, ret)
		}
		g, warnings, err := p.readGPU(i, dev, syms)
		if err != nil {
			return nil, err
		}
		inv.GPUs = append(inv.GPUs, g)
		inv.Warnings = append(inv.Warnings, warnings...)
	}
	resolvePeers(inv.GPUs)
	domain, warnings := resolveDomain(inv.GPUs)
	inv.NVLinkDomain = domain
	inv.Warnings = append(inv.Warnings, warnings...)
	if domain != "" {
		sub, warnings := resolveSubDomain(inv.GPUs)
		inv.NVLinkSubDomain = sub
		inv.Warnings = append(inv.Warnings, warnings...)
	}
	return inv, nil
}

// readGPU reads one GPU: identity first (fatal on failure), then NUMA node, fabric and NVLinks (warnings).
func (p *Probe) readGPU(i int, dev gonvml.Device, syms *symbols) (GPU, []string, error) {
	g := GPU{Index: i, NUMANode: -1}
	uuid, ret := dev.GetUUID()
	if ret != gonvml.SUCCESS {
		return g, nil, fmt.Errorf("GPU %d: read UUID: %w", i, ret)
	}
	g.UUID = uuid
	label := gpuLabel(i, uuid)

	var warnings []string
	if name, ret := dev.GetName(); ret == gonvml.SUCCESS {
		g.Model = name
	} else {
		warnings = append(warnings, fmt.Sprintf("%s: read model name: %v", label, ret))
	}

	pci, ret := dev.GetPciInfo()
	if ret != gonvml.SUCCESS {
		return g, nil, fmt.Errorf("%s: read PCI info: %w", label, ret)
	}
	if busID, ok := busIDFromPciInfo(pci); ok {
		g.PCIBusID = busID
	} else {
		warnings = append(warnings, fmt.Sprintf("%s: NVML reported no usable PCI bus ID (%q)", label, rawBusID(pci)))
	}

	numa, warn := p.numaNode(dev, g.PCIBusID, syms)
	g.NUMANode = numa
	if warn != "" {
		warnings = append(warnings, label+": "+warn)
	}

	fabric, err := p.readFabric(dev, syms)
	g.Fabric = fabric
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: %v", label, err))
	}

	if fabric.State == FabricCompleted { // a chassis only names a sub-domain of a multi-node NVLink domain
		chassis, err := readChassis(dev, syms)
		g.Chassis = chassis
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v", label, err))
		}
	}

	links, problems := readNVLinks(dev, syms)
	g.NVLinks = links
	g.ActiveNVLinks = len(links)
	if len(problems) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: NVLink queries failed: %s", label, joinSemi(problems)))
	}
	return g, warnings, nil
}

// gpuLabel names a GPU in messages: "GPU 3 (GPU-…)".
func gpuLabel(index int, uuid string) string {
	return fmt.Sprintf("GPU %d (%s)", index, uuid)
}
