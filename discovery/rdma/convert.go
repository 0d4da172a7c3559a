package rdma

import (
	"fmt"
	"math"
	"slices"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/discovery/pciaddr"
)

// Bounds of the report API (the MaxItems markers of v1alpha1.RDMADevice and RDMAPort).
const (
	maxAPIDevices = 64
	maxAPIPorts   = 16
	maxAPIGIDs    = 64
)

// maxCharDevices is the most character devices a report lists for one RDMA device (the API's limit).
const maxCharDevices = 8

// ToAPI turns scanned devices into report objects; virtual devices (sub-functions, and SR-IOV virtual
// functions of a physical function on the node: see Device.Virtual) are left out. gpuUUIDs maps GPU PCI
// addresses (any spelling pciaddr.Normalize reads) to GPU UUIDs; a device's NearestGPU is the UUID when the
// map has it, else the GPU's PCI address. NearestGPU is left empty when no GPU, or more than one GPU equally
// near, was found. An Ethernet port lists its RoCE v2 GIDs only; an InfiniBand port, all its non-zero GIDs.
// Lists longer than the API allows are cut, and each cut is returned as a message. A port's RateGbps is its
// rate rounded to whole Gb/s (2.5 Gb/s SDR gives 3). Link health is the probe's to judge (Run), not ToAPI's.
func ToAPI(devs []Device, gpuUUIDs map[string]string) ([]v1alpha1.RDMADevice, []string) {
	devs = physical(devs)
	uuids := make(map[string]string, len(gpuUUIDs))
	for addr, uuid := range gpuUUIDs {
		if a, err := pciaddr.Normalize(addr); err == nil {
			uuids[a] = uuid
		}
	}
	var cut []string
	if len(devs) > maxAPIDevices {
		cut = append(cut, fmt.Sprintf("%d RDMA devices, only the first %d reported", len(devs), maxAPIDevices))
		devs = devs[:maxAPIDevices]
	}
	out := make([]v1alpha1.RDMADevice, 0, len(devs))
	for _, d := range devs {
		ad := v1alpha1.RDMADevice{
			Name:            d.Name,
			NodeGUID:        FormatGUID(d.NodeGUID),
			SystemImageGUID: FormatGUID(d.SysImageGUID),
			PCIAddress:      d.PCIAddress,
			CharDevices:     slices.Clone(d.CharDevices[:min(len(d.CharDevices), maxCharDevices)]),
		}
		if d.NUMANode >= 0 {
			n := int32(d.NUMANode)
			ad.NUMANode = &n
		}
		if g := d.NearestGPU; g != nil && len(g.Candidates) == 1 {
			ad.NearestGPU = g.PCIAddress
			if uuid, ok := uuids[g.PCIAddress]; ok {
				ad.NearestGPU = uuid
			}
		}
		ports := d.Ports
		if len(ports) > maxAPIPorts {
			cut = append(cut, fmt.Sprintf("%s: %d ports, only the first %d reported", d.Name, len(ports), maxAPIPorts))
			ports = ports[:maxAPIPorts]
		}
		for _, p := range ports {
			ap := v1alpha1.RDMAPort{
				Number:    int32(p.Number),
				GUID:      FormatGUID(p.GUID),
				LinkLayer: p.LinkLayer,
				State:     p.State,
				PhysState: p.PhysState,
				Rate:      p.Rate,
				RateGbps:  int32(math.Round(min(p.RateGbps, math.MaxInt32))),
				Width:     p.Width,
				LID:       int32(p.LID),
				SMLID:     int32(p.SMLID),
				NetDev:    p.NetDev,
				Class:     p.Class,
			}
			for _, g := range p.GIDs {
				if p.LinkLayer == LinkLayerEthernet && g.Type != "" && g.Type != GIDTypeRoCEv2 {
					continue
				}
				ap.GIDs = append(ap.GIDs, g.String())
			}
			if len(ap.GIDs) > maxAPIGIDs {
				cut = append(cut, fmt.Sprintf("%s port %d: %d GIDs, only the first %d reported",
					d.Name, p.Number, len(ap.GIDs), maxAPIGIDs))
				ap.GIDs = ap.GIDs[:maxAPIGIDs]
			}
			ad.Ports = append(ad.Ports, ap)
		}
		out = append(out, ad)
	}
	return out, cut
}

// physical is devs without the virtual ones, in the same order.
func physical(devs []Device) []Device {
	out := make([]Device, 0, len(devs))
	for _, d := range devs {
		if !d.Virtual() {
			out = append(out, d)
		}
	}
	return out
}
