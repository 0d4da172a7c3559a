package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/fabricmap/fabricmap/discovery/pciaddr"
)

// busIDFromPciInfo returns the PCI address NVML reported, in the lower-case "dddd:bb:dd.f" form sysfs uses.
// It prefers the full BusId and falls back to the legacy field; ok is false when neither parses.
func busIDFromPciInfo(info gonvml.PciInfo) (string, bool) {
	if id, err := pciaddr.Normalize(cString(info.BusId[:])); err == nil {
		return id, true
	}
	if id, err := pciaddr.Normalize(cString(info.BusIdLegacy[:])); err == nil {
		return id, true
	}
	return "", false
}

// rawBusID is the unparsed bus ID text, for messages.
func rawBusID(info gonvml.PciInfo) string {
	return cString(info.BusId[:])
}

// cString reads a NUL-terminated C char array.
func cString(chars []int8) string {
	b := make([]byte, 0, len(chars))
	for _, c := range chars {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
