package nvml

import (
	"fmt"
	"strconv"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// busIDFromPciInfo returns the PCI address NVML reported, in the lower-case "dddd:bb:dd.f" form sysfs uses.
// It prefers the full BusId and falls back to the legacy field; ok is false when neither parses.
func busIDFromPciInfo(info gonvml.PciInfo) (string, bool) {
	if id, err := normalizeBusID(cString(info.BusId[:])); err == nil {
		return id, true
	}
	if id, err := normalizeBusID(cString(info.BusIdLegacy[:])); err == nil {
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

// normalizeBusID turns a PCI address as NVML or sysfs print it ("00000000:3B:00.0", "0000:3b:00.0",
// "3b:00.0") into sysfs's form: a domain of at least four hex digits, then bus, device and function, all
// lower case.
func normalizeBusID(s string) (string, error) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ":")
	var domainText, busText, devFn string
	switch len(parts) {
	case 2:
		domainText, busText, devFn = "0", parts[0], parts[1]
	case 3:
		domainText, busText, devFn = parts[0], parts[1], parts[2]
	default:
		return "", fmt.Errorf("PCI address %q: want [domain:]bus:device.function", s)
	}
	devText, fnText, found := strings.Cut(devFn, ".")
	if !found {
		return "", fmt.Errorf("PCI address %q: no function number", s)
	}
	domain, err := parseHexField(domainText, 8, 0xffffffff)
	if err != nil {
		return "", fmt.Errorf("PCI address %q: domain: %w", s, err)
	}
	bus, err := parseHexField(busText, 2, 0xff)
	if err != nil {
		return "", fmt.Errorf("PCI address %q: bus: %w", s, err)
	}
	dev, err := parseHexField(devText, 2, 0x1f)
	if err != nil {
		return "", fmt.Errorf("PCI address %q: device: %w", s, err)
	}
	fn, err := parseHexField(fnText, 1, 7)
	if err != nil {
		return "", fmt.Errorf("PCI address %q: function: %w", s, err)
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", domain, bus, dev, fn), nil
}

// parseHexField parses a hex field of at most maxDigits digits whose value does not exceed maxValue.
func parseHexField(s string, maxDigits int, maxValue uint64) (uint64, error) {
	if s == "" || len(s) > maxDigits {
		return 0, fmt.Errorf("%q is not 1 to %d hex digits", s, maxDigits)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not hex: %w", s, err)
	}
	if v > maxValue {
		return 0, fmt.Errorf("%#x exceeds %#x", v, maxValue)
	}
	return v, nil
}
