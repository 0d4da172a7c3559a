package ib

import (
	"regexp"
	"strings"
	"unicode"
)

// SwitchNameModel splits an NVIDIA/Mellanox switch description into the switch's name and model.
//
// Managed switches describe themselves as "<prefix>;<name>:<model>/<unit>", e.g. "MF0;sw-leaf-01:MQM9700/U1"
// gives name "sw-leaf-01" and model "MQM9700". A description without that shape (an unmanaged switch's
// "Quantum Mellanox Technologies", or a name from a node-name map) is the name as a whole, with no model.
func SwitchNameModel(desc string) (name, model string) {
	desc = strings.TrimSpace(desc)
	semi := strings.IndexByte(desc, ';')
	if semi >= 0 {
		rest := desc[semi+1:]
		if colon := strings.IndexByte(rest, ':'); colon > 0 {
			name = strings.TrimSpace(rest[:colon])
			model = rest[colon+1:]
			if slash := strings.IndexByte(model, '/'); slash >= 0 {
				model = model[:slash]
			}
			model = strings.TrimSpace(model)
			if name != "" {
				return name, model
			}
		}
	}
	return desc, ""
}

// HostDevice splits a CA description into the host name (first word, lower-cased) and the device (second
// word, as printed). Linux sets a CA's node description to "<hostname> <device>" ("dgx-001 mlx5_0"); older
// stacks print "<hostname> HCA-<n>". SHARP aggregation nodes ("Mellanox Technologies Aggregation Node")
// belong to no host: both results are empty for them.
func HostDevice(desc string) (host, device string) {
	if strings.Contains(strings.ToLower(desc), "aggregation node") {
		return "", ""
	}
	first, rest := cutField(desc)
	device, _ = cutField(rest)
	return strings.ToLower(first), device
}

// cutField returns s's first field as strings.Fields splits it (around runs of white space), and what
// follows it, without allocating: HostDevice runs once for every CA of a capture.
func cutField(s string) (field, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// DefaultSwitchDescriptionRegexp matches the node description an NVIDIA/Mellanox switch ASIC carries until it
// is given a name: its ASIC family and the vendor, "Infiniscale-IV Mellanox Technologies", "SwitchX -
// Mellanox Technologies", "SwitchIB Mellanox Technologies", "Quantum Mellanox Technologies" (NVIDIA in place of
// Mellanox Technologies on newer firmware). An unmanaged switch (a blade switch, an externally managed one)
// keeps it for life, so that many switches of one fabric share it. A managed switch's "MF0;<host
// name>:<model>/U1" is not one: its default host name ("switch-" and six hex digits of its MAC address) is its
// own.
const DefaultSwitchDescriptionRegexp = `(?i)^\s*(MT\d{4,5}\s+)?(InfiniScale|SwitchX|Switch-?IB|Quantum)[-\w]*(\s+-)?\s+(Mellanox Technologies|NVIDIA)\b`

var defaultSwitchDescription = regexp.MustCompile(DefaultSwitchDescriptionRegexp)

// IsDefaultSwitchDescription tells whether desc is a switch's default description
// (DefaultSwitchDescriptionRegexp).
func IsDefaultSwitchDescription(desc string) bool { return defaultSwitchDescription.MatchString(desc) }

// UnshareDefaultSwitchNames renames, in names (a switch's identifier → its name, as a source gives them), every
// switch whose name is a default switch description that another switch of names also has (spacing and case
// aside): such a name names none of them, so each is named "guid-<identifier>", whatever the order the
// source lists them in. A default description only one switch has, or an ordinary name several share, is
// left as it is. The capture (sources/ibfabric) and UFM (sources/ufm) name switches so alike.
func UnshareDefaultSwitchNames(names map[string]string) {
	byDefault := map[string][]string{}
	for id, name := range names {
		if IsDefaultSwitchDescription(name) {
			key := strings.ToLower(strings.Join(strings.Fields(name), " "))
			byDefault[key] = append(byDefault[key], id)
		}
	}
	for _, ids := range byDefault {
		if len(ids) > 1 {
			for _, id := range ids {
				names[id] = "guid-" + id
			}
		}
	}
}
