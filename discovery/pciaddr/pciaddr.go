// Package pciaddr reads PCI addresses in the spellings the probes meet (sysfs, NVML, lspci) and writes them
// one way, so that a GPU and an HCA found by different probes can be matched by address. It is pure and
// portable: the aggregator (fabric health) and the CLI use it as well as the Linux probes.
package pciaddr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var re = regexp.MustCompile(`^(?i)(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$`)

// Normalize turns a PCI address in any usual spelling ("0000:18:00.0", NVML's "00000000:18:00.0", upper case,
// or "18:00.0" without a domain) into sysfs's "dddd:bb:dd.f" in lower case.
func Normalize(s string) (string, error) {
	m := re.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("PCI address %q: want domain:bus:device.function", s)
	}
	dom := uint64(0)
	if m[1] != "" {
		dom, _ = strconv.ParseUint(m[1], 16, 32)
	}
	bus, _ := strconv.ParseUint(m[2], 16, 8)
	dev, _ := strconv.ParseUint(m[3], 16, 8)
	if dev > 0x1f {
		return "", fmt.Errorf("PCI address %q: device number above 0x1f", s)
	}
	return fmt.Sprintf("%04x:%02x:%02x.%s", dom, bus, dev, m[4]), nil
}

// IsFunction tells whether s (a sysfs path component) names a PCI function with its domain: dddd:bb:dd.f.
func IsFunction(s string) bool {
	return re.MatchString(s) && strings.Count(s, ":") == 2
}
