package lldp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// lldpd's JSON output ("lldpcli -f json show neighbors [details]") is built from a tree of tags, attributes
// and values and then simplified: a list of one element becomes that element, an object whose only key is
// "value" becomes that value, and an object with a string "name" becomes {"<name>": {…the rest…}}. So one
// interface prints as an object and several as a list, and a chassis with a system name is wrapped in an
// object keyed by that name. "-f json0" skips the simplification: everything is a list and names stay
// inside. The parser below accepts both by unwrapping as it goes.

// lldpdSubtypes maps lldpd's ID subtype names to the ones Decode uses.
var lldpdSubtypes = map[string]string{
	"mac":     "mac",
	"ifname":  "ifName",
	"ifalias": "ifAlias",
	"local":   "local",
	"ip":      "networkAddress",
}

// chassisKeys are the keys of an unnamed chassis object, which must not be mistaken for a system name.
var chassisKeys = []string{"id", "descr", "mgmt-ip", "mgmt-iface", "capability", "ttl"}

// ParseLLDPCLI parses the JSON that "lldpcli -f json show neighbors" (or "-f json0", with or without
// "details") prints into sightings with Source lldpd, sorted. Neighbours it cannot use (no chassis ID) are
// skipped and explained in warnings; output that is not lldpd's JSON is an error.
func ParseLLDPCLI(data []byte) ([]Sighting, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, nil, fmt.Errorf("parse lldpcli JSON: %w", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, nil, errors.New("parse lldpcli JSON: top level is not an object")
	}
	lldp, ok := obj["lldp"]
	if !ok {
		return nil, nil, errors.New(`parse lldpcli JSON: no "lldp" key`)
	}
	var (
		sightings []Sighting
		warnings  []string
	)
	for _, section := range objects(lldp) {
		for _, entry := range objects(section["interface"]) {
			for iface, body := range interfaceEntries(entry) {
				n, err := lldpdNeighbor(body)
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("lldpcli neighbour on %s: %v; skipped", iface, err))
					continue
				}
				sightings = append(sightings, Sighting{Interface: iface, Neighbor: n})
			}
		}
	}
	SortSightings(sightings)
	slices.Sort(warnings)
	return sightings, warnings, nil
}

// interfaceEntries yields the interfaces of one element of lldpd's "interface" value: {"eth0": {…}} in
// json, possibly with several keys, or {"name": "eth0", …} in json0.
func interfaceEntries(entry map[string]any) map[string]map[string]any {
	if name := text(entry["name"]); name != "" {
		return map[string]map[string]any{name: entry}
	}
	out := map[string]map[string]any{}
	for name, v := range entry {
		if body := object(v); body != nil {
			out[name] = body
		}
	}
	return out
}

// lldpdNeighbor converts one interface entry of lldpd's JSON.
func lldpdNeighbor(body map[string]any) (Neighbor, error) {
	chassis := object(body["chassis"])
	if chassis == nil {
		return Neighbor{}, errors.New("no chassis")
	}
	sysName, chassis := unwrapNamed(chassis)
	port := object(body["port"])
	n := Neighbor{
		Source:            v1alpha1.SourceLLDPD,
		SystemName:        sysName,
		SystemDescription: text(chassis["descr"]),
		ManagementAddress: preferredAddress(texts(chassis["mgmt-ip"])),
		PortDescription:   text(port["descr"]),
		PortVLANID:        pvid(body["vlan"]),
	}
	n.ChassisID, n.ChassisIDSubtype = lldpdID(chassis["id"])
	if n.ChassisID == "" {
		return Neighbor{}, errors.New("no chassis ID")
	}
	n.PortID, n.PortIDSubtype = lldpdID(port["id"])
	ttl := text(port["ttl"])
	if ttl == "" {
		ttl = text(chassis["ttl"]) // lldpd before 1.0 kept the TTL on the chassis
	}
	if seconds, err := strconv.ParseUint(ttl, 10, 16); err == nil {
		n.TTL = time.Duration(seconds) * time.Second
	}
	if mfs, err := strconv.ParseUint(text(port["mfs"]), 10, 16); err == nil {
		n.MaxFrameSize = uint16(mfs)
	}
	n.Aggregation = lldpdAggregation(port["aggregation"])
	return n, nil
}

// lldpdAggregation reads the port's "aggregation" element: lldpd prints it ("Port is aggregated.
// PortAggregID") only for a port the neighbour announces as aggregated, with the aggregate's ID, so it stands
// for a port that is capable and enabled. Absent, or not a positive ID: nil.
func lldpdAggregation(v any) *LinkAggregation {
	id, err := strconv.ParseUint(text(v), 10, 32)
	if err != nil || id == 0 {
		return nil
	}
	return &LinkAggregation{Capable: true, Enabled: true, PortID: uint32(id)}
}

// unwrapNamed undoes lldpd's name hoisting: {"sw1": {…}} gives "sw1" and the inner object; an object with
// its name inside (json0) gives the name and the object; an unnamed chassis gives "" and itself.
func unwrapNamed(obj map[string]any) (string, map[string]any) {
	if name := text(obj["name"]); name != "" {
		return name, obj
	}
	if len(obj) == 1 {
		for k, v := range obj {
			if inner := object(v); inner != nil && !slices.Contains(chassisKeys, k) {
				return k, inner
			}
		}
	}
	return "", obj
}

// lldpdID reads an ID element: {"type": "mac", "value": "…"}, or a bare value when lldpd printed no type.
func lldpdID(v any) (id, subtype string) {
	obj := object(v)
	if obj == nil {
		return text(v), ""
	}
	subtype = text(obj["type"])
	if mapped, ok := lldpdSubtypes[subtype]; ok {
		subtype = mapped
	}
	return text(obj["value"]), subtype
}

// pvid finds the port VLAN ID among lldpd's "vlan" elements ({"vlan-id": "10", "pvid": true, …}).
func pvid(v any) uint16 {
	for _, vlan := range objects(v) {
		if b, ok := unwrap(vlan["pvid"]).(bool); ok && b {
			if id, err := strconv.ParseUint(text(vlan["vlan-id"]), 10, 12); err == nil && id <= maxVLANID {
				return uint16(id)
			}
		}
	}
	return 0
}

// preferredAddress picks the first IPv4 address, else the first address.
func preferredAddress(addrs []string) string {
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
			return a
		}
	}
	if len(addrs) == 0 {
		return ""
	}
	return addrs[0]
}

// unwrap strips lldpd's wrappers from v: single-element lists and {"value": x} objects.
func unwrap(v any) any {
	for {
		switch t := v.(type) {
		case []any:
			if len(t) != 1 {
				return v
			}
			v = t[0]
		case map[string]any:
			inner, ok := t["value"]
			if !ok || len(t) != 1 {
				return v
			}
			v = inner
		default:
			return v
		}
	}
}

// object returns v unwrapped as an object, or nil.
func object(v any) map[string]any {
	obj, _ := unwrap(v).(map[string]any)
	return obj
}

// objects returns v as a list of objects, whether lldpd printed one object or a list of them.
func objects(v any) []map[string]any {
	var out []map[string]any
	for _, item := range list(v) {
		if obj := object(item); obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

// list returns v as a list: a list as is, nil as empty, anything else as a list of one.
func list(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	default:
		return []any{t}
	}
}

// text returns v unwrapped as a string ("" for objects, lists and null).
func text(v any) string {
	switch t := unwrap(v).(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	default:
		return ""
	}
}

// texts returns every string in v, whether lldpd printed one value or a list.
func texts(v any) []string {
	var out []string
	for _, item := range list(v) {
		if s := text(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}
