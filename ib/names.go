package ib

import "strings"

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
	words := strings.Fields(desc)
	if len(words) > 0 {
		host = strings.ToLower(words[0])
	}
	if len(words) > 1 {
		device = words[1]
	}
	return host, device
}
