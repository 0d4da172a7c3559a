package nvml

import (
	"encoding/hex"
	"fmt"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// symPlatformInfo is the call that gives a GPU's chassis (rack) in a multi-node NVLink system (GB200/GB300
// NVL72 and later); older drivers lack it.
const symPlatformInfo = "nvmlDeviceGetPlatformInfo"

// readChassis returns the identifier of the chassis (rack) that holds dev, from NVML's platform info: the
// chassis serial number when the driver fills the field with one (printable characters, NUL padded), else
// the 16 bytes in hex (the rack GUID of the structure's first version). It is "" when the driver has no such
// call, the GPU does not support it, or the field is all zero; other failures are returned.
func readChassis(dev gonvml.Device, syms *symbols) (string, error) {
	if !syms.has(symPlatformInfo) {
		return "", nil
	}
	info, ret := dev.GetPlatformInfo()
	switch ret {
	case gonvml.SUCCESS:
		return chassisID(info.ChassisSerialNumber), nil
	case gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_FUNCTION_NOT_FOUND, gonvml.ERROR_ARGUMENT_VERSION_MISMATCH:
		return "", nil
	default:
		return "", fmt.Errorf("read platform info: %w", ret)
	}
}

// chassisID prints a chassis identifier field: its text when it holds printable ASCII followed only by
// NULs, else its hex; "" when it is all zero.
func chassisID(b [16]uint8) string {
	if b == ([16]uint8{}) {
		return ""
	}
	text := strings.TrimRight(string(b[:]), "\x00")
	for _, r := range text {
		if r < 0x21 || r > 0x7e {
			return hex.EncodeToString(b[:])
		}
	}
	return text
}

// resolveSubDomain derives the node's NVLink sub-domain from its GPUs' chassis: the one chassis every GPU
// reports, "" when none reports one. GPUs of one node in different chassis (or some without one) give "" and
// a warning: a sub-domain, like the domain, is withheld rather than guessed.
func resolveSubDomain(gpus []GPU) (string, []string) {
	var (
		chassis []string                // in order of first appearance
		members = map[string][]string{} // chassis → GPU labels
		none    []string
	)
	for _, g := range gpus {
		label := gpuLabel(g.Index, g.UUID)
		if g.Chassis == "" {
			none = append(none, label)
			continue
		}
		if _, seen := members[g.Chassis]; !seen {
			chassis = append(chassis, g.Chassis)
		}
		members[g.Chassis] = append(members[g.Chassis], label)
	}
	switch {
	case len(chassis) == 0:
		return "", nil
	case len(chassis) == 1 && len(none) == 0:
		return chassis[0], nil
	}
	groups := make([]string, 0, len(chassis)+1)
	for _, c := range chassis {
		groups = append(groups, fmt.Sprintf("%s on %s", c, strings.Join(members[c], ", ")))
	}
	if len(none) > 0 {
		groups = append(groups, "none on "+strings.Join(none, ", "))
	}
	return "", []string{fmt.Sprintf("GPUs of one node report different chassis: %s; NVLink sub-domain withheld", strings.Join(groups, "; "))}
}
