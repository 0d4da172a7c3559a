package ufm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A SwitchX-based InfiniBand-to-Ethernet gateway (MSX6710-G, SX6036G) shows its gateway function to the fabric
// as a CA of its own, whose node description is its switch's with "GW" for the unit: "MF0;gw-1:MSX6710/GW"
// beside the switch's "MF0;gw-1:MSX6710/U1". UFM lists such a CA as a host, often under the switch's system
// GUID (see newIndex). It is no node to place: it is listed with the gateways, by name and type, so that it
// never vanishes without a word.

// gatewayUnit is the unit a gateway's node description ends with ("MF0;gw-1:MSX6710/GW").
const gatewayUnit = "GW"

// isGatewayDescription tells whether desc is a gateway's node description, "MF0;<name>:<model>/GW", a port
// number after it (":1") aside.
func isGatewayDescription(desc string) bool {
	_, rest, ok := strings.Cut(strings.TrimSpace(desc), ";")
	if !ok {
		return false
	}
	_, unit, ok := strings.Cut(rest, ":")
	if !ok {
		return false
	}
	segs := strings.Split(unit, "/")
	last, _, _ := strings.Cut(segs[len(segs)-1], ":")
	return len(segs) > 1 && strings.EqualFold(strings.TrimSpace(last), gatewayUnit)
}

// notAHost says what a system UFM lists as a host is instead, and what shows it: a gateway, for a system name
// or HCA description of a gateway (isGatewayDescription) or a server_operation_mode "Gateway"; a router, for a
// server_operation_mode "Router". It returns "" for a host.
func (h *hostAcc) notAHost() (kind, sign string) {
	if isGatewayDescription(h.SystemName) {
		return "gateway", fmt.Sprintf("its name is a gateway's node description (unit %q)", gatewayUnit)
	}
	for _, d := range h.Descriptions {
		if isGatewayDescription(d) {
			return "gateway", fmt.Sprintf("its HCA's description %q is a gateway's (unit %q)", strings.TrimSpace(d), gatewayUnit)
		}
	}
	switch mode := strings.TrimSpace(h.mode); strings.ToLower(mode) {
	case "gateway":
		return "gateway", fmt.Sprintf("its server_operation_mode is %q", mode)
	case "router":
		return "router", fmt.Sprintf("its server_operation_mode is %q", mode)
	}
	return "", ""
}

// sortLeftOut orders systems left out by type, then system GUID.
func sortLeftOut(systems []LeftOutSystem) {
	slices.SortFunc(systems, func(a, b LeftOutSystem) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.SystemGUID, b.SystemGUID))
	})
}
