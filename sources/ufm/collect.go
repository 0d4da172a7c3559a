package ufm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// collector sorts the links of a fabric into host uplinks and cables between switch ASICs.
type collector struct {
	ix      *index
	hosts   map[*system]*hostAcc
	cables  map[[2]string]bool          // seen cables, by their two "<guid>_<port>" ends in order
	swPairs map[[2]string]bool          // ASIC pairs joined by at least one cable, in order
	asics   map[*system]map[string]bool // switch system → its ASICs that carry cables
	swDesc  map[string]string           // ASIC → a node description a link gave it
	skipped []string
}

// linkEnd is one end of a link, resolved to its node.
type linkEnd struct {
	guid, port, desc string
	node             *node
}

func newCollector(ix *index) *collector {
	return &collector{ix: ix, hosts: map[*system]*hostAcc{}, cables: map[[2]string]bool{},
		swPairs: map[[2]string]bool{}, asics: map[*system]map[string]bool{}, swDesc: map[string]string{}}
}

func (c *collector) add(l Link) {
	name := l.Name
	if name == "" {
		name = l.SourceGUID + "_" + l.SourcePort + ":" + l.DestinationGUID + "_" + l.DestinationPort
	}
	a, why := c.resolve(l.SourceGUID, l.SourcePort, l.SourceNodeDescription)
	if why == "" {
		var b linkEnd
		if b, why = c.resolve(l.DestinationGUID, l.DestinationPort, l.DestinationNodeDescription); why == "" {
			why = c.addCable(a, b)
		}
	}
	if why != "" {
		c.skipped = append(c.skipped, fmt.Sprintf("link %s: %s", clip(name, 120), why))
	}
}

// resolve finds the node of one link end, or says why it cannot be used.
func (c *collector) resolve(guid, port, desc string) (linkEnd, string) {
	g, ok := normGUID(guid)
	if !ok {
		return linkEnd{}, fmt.Sprintf("end %q is no GUID", clip(guid, 40))
	}
	n := c.ix.nodes[g]
	if n == nil {
		return linkEnd{}, fmt.Sprintf("end %s (%q) belongs to no system that %s or %s list", g, clip(desc, 60), EndpointSystems, EndpointPorts)
	}
	return linkEnd{guid: g, port: strings.TrimSpace(port), desc: strings.TrimSpace(desc), node: n}, ""
}

// addCable records a cable between two resolved ends, or says why it is left out. A cable listed twice
// (from each end) counts once.
func (c *collector) addCable(a, b linkEnd) string {
	key := [2]string{a.guid + "_" + a.port, b.guid + "_" + b.port}
	if key[1] < key[0] {
		key[0], key[1] = key[1], key[0]
	}
	if c.cables[key] {
		return ""
	}
	c.cables[key] = true
	ka, kb := a.node.sys.kind, b.node.sys.kind
	switch {
	case ka == typeSwitch && kb == typeSwitch:
		if a.guid == b.guid {
			return "a loopback cable between two ports of one switch"
		}
		c.useASIC(a)
		c.useASIC(b)
		pair := [2]string{a.guid, b.guid}
		if pair[1] < pair[0] {
			pair[0], pair[1] = pair[1], pair[0]
		}
		c.swPairs[pair] = true
	case ka == typeHost && kb == typeSwitch:
		c.addUplink(a, b)
	case ka == typeSwitch && kb == typeHost:
		c.addUplink(b, a)
	case ka == typeHost && kb == typeHost:
		return "a cable between two hosts, with no switch"
	default:
		other := a
		if ka == typeSwitch || ka == typeHost {
			other = b
		}
		kind := other.node.sys.kind
		if kind == "" {
			kind = "system of no type"
		}
		return fmt.Sprintf("end %s is a %s, neither a switch nor a host", other.guid, kind)
	}
	return ""
}

func (c *collector) useASIC(e linkEnd) {
	set := c.asics[e.node.sys]
	if set == nil {
		set = map[string]bool{}
		c.asics[e.node.sys] = set
	}
	set[e.guid] = true
	if c.swDesc[e.guid] == "" && e.desc != "" {
		c.swDesc[e.guid] = e.desc
	}
}

func (c *collector) addUplink(h, sw linkEnd) {
	c.useASIC(sw)
	acc := c.host(h.node.sys)
	desc := h.desc
	if desc == "" {
		desc = h.node.desc
	}
	_, device := ib.HostDevice(desc)
	if desc != "" && !slices.Contains(acc.Descriptions, desc) {
		acc.Descriptions = append(acc.Descriptions, desc)
	}
	acc.uplinks = append(acc.uplinks, uplink{device: device, hca: h.guid, hport: h.port, asic: sw.guid, port: sw.port})
}

func (c *collector) host(sys *system) *hostAcc {
	acc := c.hosts[sys]
	if acc == nil {
		acc = &hostAcc{Host: Host{SystemGUID: sys.guid, SystemName: sys.name, IP: sys.ip}}
		c.hosts[sys] = acc
	}
	return acc
}

// hostList returns every host system, with or without uplinks, by system GUID, each with its HCA
// descriptions and uplinks sorted.
func (c *collector) hostList() []*hostAcc {
	for _, sys := range c.ix.systems {
		if sys.kind == typeHost {
			c.host(sys)
		}
	}
	for _, n := range c.ix.nodes {
		if n.sys.kind == typeHost && n.desc != "" {
			if acc := c.host(n.sys); !slices.Contains(acc.Descriptions, n.desc) {
				acc.Descriptions = append(acc.Descriptions, n.desc)
			}
		}
	}
	out := make([]*hostAcc, 0, len(c.hosts))
	for _, acc := range c.hosts {
		slices.Sort(acc.Descriptions)
		acc.sortUplinks()
		out = append(out, acc)
	}
	slices.SortFunc(out, func(a, b *hostAcc) int { return strings.Compare(a.SystemGUID, b.SystemGUID) })
	return out
}

// modular reports whether a switch system has several ASICs that carry cables (a director).
func (c *collector) modular(sys *system) bool { return len(c.asics[sys]) > 1 }

// systemName is the name of a switch system: the name part of a "MF0;<name>:<model>/U1" system name, else
// the system name as it is.
func systemName(sys *system) string {
	name, _ := ib.SwitchNameModel(sys.name)
	return name
}

// switchName names a switch ASIC: its system's name, or when UFM gave the system none, the name a link gave
// the ASIC ("sw-01:33" gives "sw-01"). An ASIC of a director gets its module (or its GUID) appended:
// "dir-01/L02".
func (c *collector) switchName(guid string) string {
	n := c.ix.nodes[guid]
	name := systemName(n.sys)
	if name == "" {
		name, _, _ = strings.Cut(c.swDesc[guid], ":")
		name = strings.TrimSpace(name)
	}
	if name == "" || !c.modular(n.sys) {
		return name
	}
	label := n.module
	if label == "" {
		label = guid
	}
	return name + "/" + label
}

// switchEdges returns one edge per pair of switches joined by cables, and for each director one edge from
// each of its cabled ASICs to its chassis, ordered by their ends.
func (c *collector) switchEdges() []topology.SwitchEdge {
	names := map[string]string{}
	pairs := map[[2]string]bool{}
	add := func(a, b string) {
		if a == b {
			return
		}
		if b < a {
			a, b = b, a
		}
		pairs[[2]string{a, b}] = true
	}
	for p := range c.swPairs {
		a, b := switchID(p[0]), switchID(p[1])
		names[a], names[b] = c.switchName(p[0]), c.switchName(p[1])
		add(a, b)
	}
	for sys, asics := range c.asics {
		if len(asics) < 2 {
			continue
		}
		chassis := switchID(sys.guid)
		if _, named := names[chassis]; !named {
			names[chassis] = systemName(sys)
		}
		for g := range asics {
			id := switchID(g)
			names[id] = c.switchName(g)
			add(id, chassis)
		}
	}
	out := make([]topology.SwitchEdge, 0, len(pairs))
	for p := range pairs {
		out = append(out, topology.SwitchEdge{A: p[0], B: p[1], AName: names[p[0]], BName: names[p[1]], Source: Name})
	}
	slices.SortFunc(out, func(x, y topology.SwitchEdge) int {
		if c := strings.Compare(x.A, y.A); c != 0 {
			return c
		}
		return strings.Compare(x.B, y.B)
	})
	return out
}
